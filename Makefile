# Install softrouter: the binary, the systemd unit, an example
# configuration, man pages and shell completions (the last two generated
# by the binary itself from its clap definitions).
#
#   make                      # cargo build --release
#   sudo make install         # into /usr/local; PREFIX=/usr, DESTDIR=pkgroot work
#   sudo make uninstall
#
# An existing /etc/softrouter/router.toml is never overwritten.

PREFIX   ?= /usr/local
DESTDIR  ?=
CARGO    ?= cargo
SYSCONFDIR ?= /etc
UNITDIR  ?= $(PREFIX)/lib/systemd/system

BIN      := target/release/softrouter
BINDIR   := $(PREFIX)/bin
MANDIR   := $(PREFIX)/share/man/man1
BASHDIR  := $(PREFIX)/share/bash-completion/completions
ZSHDIR   := $(PREFIX)/share/zsh/site-functions
FISHDIR  := $(PREFIX)/share/fish/vendor_completions.d
GEN      := target/release/generated

.PHONY: all build generated install uninstall

all: build

build:
	$(CARGO) build --release -p softrouter

generated: build
	rm -rf $(GEN) && mkdir -p $(GEN)/man
	$(BIN) man --dir $(GEN)/man
	$(BIN) completions bash > $(GEN)/softrouter.bash
	$(BIN) completions zsh > $(GEN)/_softrouter
	$(BIN) completions fish > $(GEN)/softrouter.fish
	sed -e 's|/usr/local/bin/softrouter|$(BINDIR)/softrouter|g' \
	    -e 's|/etc/softrouter/|$(SYSCONFDIR)/softrouter/|g' \
	    dist/softrouter.service > $(GEN)/softrouter.service

install: generated
	install -Dm755 $(BIN) $(DESTDIR)$(BINDIR)/softrouter
	install -Dm644 $(GEN)/softrouter.service $(DESTDIR)$(UNITDIR)/softrouter.service
	install -d $(DESTDIR)$(MANDIR)
	install -m644 $(GEN)/man/*.1 $(DESTDIR)$(MANDIR)/
	install -Dm644 $(GEN)/softrouter.bash $(DESTDIR)$(BASHDIR)/softrouter
	install -Dm644 $(GEN)/_softrouter $(DESTDIR)$(ZSHDIR)/_softrouter
	install -Dm644 $(GEN)/softrouter.fish $(DESTDIR)$(FISHDIR)/softrouter.fish
	install -d -m755 $(DESTDIR)$(SYSCONFDIR)/softrouter
	test -e $(DESTDIR)$(SYSCONFDIR)/softrouter/router.toml || \
	    install -m644 dist/router.toml $(DESTDIR)$(SYSCONFDIR)/softrouter/router.toml
	@if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
	    systemctl daemon-reload; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/softrouter $(DESTDIR)$(UNITDIR)/softrouter.service
	rm -f $(DESTDIR)$(MANDIR)/softrouter.1 $(DESTDIR)$(MANDIR)/softrouter-*.1
	rm -f $(DESTDIR)$(BASHDIR)/softrouter $(DESTDIR)$(ZSHDIR)/_softrouter
	rm -f $(DESTDIR)$(FISHDIR)/softrouter.fish

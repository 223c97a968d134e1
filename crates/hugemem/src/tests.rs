use super::*;

const MIB: usize = 1 << 20;

fn region(name: &str) -> Option<RegionReport> {
    report().into_iter().find(|r| r.region == name)
}

fn thp_possible() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|s| !s.contains("[never]"))
        .unwrap_or(false)
}

fn zeroed_and_writable(m: &Mapping) {
    // SAFETY: m.len() bytes mapped and owned by m.
    let s = unsafe { std::slice::from_raw_parts_mut(m.as_ptr(), m.len()) };
    assert!(s.iter().step_by(4093).all(|&b| b == 0));
    s[m.len() - 1] = 7;
    assert_eq!(s[m.len() - 1], 7);
}

#[test]
fn off_gives_small_pages_and_reports_no_huge_bytes() {
    let m = Mapping::with_policy("t_off", 8 * MIB, Policy::Off).unwrap();
    assert_eq!(m.pages(), Pages::Small);
    zeroed_and_writable(&m);
    let r = region("t_off").unwrap();
    assert_eq!((r.mappings, r.bytes), (1, 8 * MIB as u64));
    assert_eq!(
        r.huge_explicit_bytes + r.huge_thp_bytes,
        0,
        "MADV_NOHUGEPAGE keeps off small"
    );
    assert_eq!(r.small_bytes(), 8 * MIB as u64);
    drop(m);
    assert!(
        region("t_off").is_none(),
        "a dropped mapping leaves the report"
    );
}

#[test]
fn small_regions_stay_on_small_pages_whatever_the_policy() {
    for p in [Policy::Auto, Policy::Require] {
        let m = Mapping::with_policy("t_tiny", 64 * 1024, p).unwrap();
        assert_eq!((m.pages(), m.len()), (Pages::Small, 64 * 1024));
    }
}

#[test]
fn thp_is_aligned_touched_and_reported_from_smaps() {
    if !thp_possible() {
        eprintln!("skipped: transparent huge pages are disabled (never)");
        return;
    }
    let m = Mapping::forced("t_thp", 5 * MIB, Pages::Thp).unwrap();
    assert_eq!(m.as_ptr() as usize % HUGE_PAGE, 0);
    assert_eq!(m.len(), 6 * MIB, "rounded up to whole huge pages");
    zeroed_and_writable(&m);
    let r = region("t_thp").unwrap();
    assert_eq!(r.huge_explicit_bytes, 0);
    // Advised before the first touch: the kernel backs (nearly) all of it.
    assert!(
        r.huge_thp_bytes >= 2 * MIB as u64,
        "only {} bytes of THP in a 6 MiB advised region",
        r.huge_thp_bytes
    );
    assert!(r.huge_thp_bytes <= r.bytes);
}

/// Reserves `n` more 2 MiB pages for the test and gives them back on drop.
struct Reserve(Option<String>);

impl Reserve {
    fn more(n: u64) -> Reserve {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Reserve(None);
        }
        let Ok(prev) = std::fs::read_to_string(NR_HUGEPAGES) else {
            return Reserve(None);
        };
        let want = prev.trim().parse::<u64>().unwrap_or(0) + n;
        if std::fs::write(NR_HUGEPAGES, want.to_string()).is_err() {
            return Reserve(None);
        }
        Reserve(Some(prev.trim().to_string()))
    }
}

impl Drop for Reserve {
    fn drop(&mut self) {
        if let Some(prev) = &self.0 {
            let _ = std::fs::write(NR_HUGEPAGES, prev);
        }
    }
}

#[test]
fn explicit_huge_pages_when_reserved_then_require_fails_clearly_without() {
    let reserve = Reserve::more(3);
    if reserve.0.is_none() || free_huge_pages().unwrap_or(0) < 3 {
        eprintln!("skipped: needs root and 3 free 2 MiB huge pages after reserving");
        return;
    }
    let m = Mapping::with_policy("t_explicit", 4 * MIB, Policy::Require).unwrap();
    assert_eq!(m.pages(), Pages::Explicit);
    zeroed_and_writable(&m);
    let r = region("t_explicit").unwrap();
    assert_eq!(r.huge_explicit_bytes, 4 * MIB as u64);
    // Auto prefers explicit pages while some are free.
    let a = Mapping::with_policy("t_explicit_auto", 2 * MIB, Policy::Auto).unwrap();
    assert_eq!(a.pages(), Pages::Explicit);
    drop((m, a));
    drop(reserve);
    // Far more than any host has free: require names region and count.
    let free = free_huge_pages().unwrap_or(0) as usize;
    let bytes = (free + 1) * HUGE_PAGE;
    if bytes > 64 * HUGE_PAGE {
        eprintln!("skipped the require failure: {free} huge pages free");
        return;
    }
    let e = Mapping::with_policy("t_required", bytes, Policy::Require)
        .err()
        .expect("more pages than free");
    let msg = e.to_string();
    assert!(msg.contains("region t_required"), "{msg}");
    assert!(
        msg.contains(&format!("need {} free 2 MiB huge pages", free + 1)),
        "{msg}"
    );
}

#[test]
fn auto_falls_back_when_no_explicit_pages_are_free() {
    if free_huge_pages().unwrap_or(0) >= 8 {
        eprintln!("skipped: the host has explicit huge pages free");
        return;
    }
    let m = Mapping::with_policy("t_auto", 16 * MIB, Policy::Auto).unwrap();
    let want = if thp_possible() {
        Pages::Thp
    } else {
        Pages::Small
    };
    assert_eq!(m.pages(), want);
    zeroed_and_writable(&m);
}

#[test]
fn large_small_page_regions_are_warned_about() {
    let _m = Mapping::with_policy("t_warned", WARN_SMALL, Policy::Off).unwrap();
    let _n = Mapping::with_policy("t_not_warned", WARN_SMALL / 2, Policy::Off).unwrap();
    let w = small_page_warnings();
    assert!(w.iter().any(|l| l.starts_with("region t_warned:")), "{w:?}");
    assert!(!w.iter().any(|l| l.contains("t_not_warned")), "{w:?}");
}

#[test]
fn smaps_attributes_huge_pages_to_the_range() {
    let text = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      4096 kB
7f0000400000-7f0000c00000 rw-p 00000000 00:00 0 
AnonHugePages:      2048 kB
7f0000c00000-7f0000c01000 r--p 00000000 08:01 12 /usr/lib/x
AnonHugePages:         0 kB
";
    let v = smaps::parse(text);
    assert_eq!(v.len(), 3);
    assert_eq!(
        smaps::anon_huge_in(&v, 0x7f0000000000, 0x7f0000400000),
        4 * MIB as u64
    );
    // A range covering 2 MiB of the second VMA: at most its overlap.
    assert_eq!(
        smaps::anon_huge_in(&v, 0x7f0000400000, 0x7f0000500000),
        MIB as u64
    );
    assert_eq!(smaps::anon_huge_in(&v, 0x7f0000c00000, 0x7f0000c01000), 0);
}

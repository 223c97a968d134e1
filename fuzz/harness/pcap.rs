//! The pcap reader (`netio::pcap_file::parse`): never panics; whatever it
//! accepts, the writer writes back to a file that parses to the same frames.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/pcap.rs) and the
//! stable test crates/softrouter/tests/fuzz_targets.rs.

use netio::pcap_file;

/// The target's body: any bytes; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let Ok(cap) = pcap_file::parse(data) else {
        return;
    };
    let total: usize = cap.iter().map(|f| f.len() + 16).sum();
    assert!(24 + total <= data.len());
    let mut w = pcap_file::Writer::new(Vec::new()).unwrap();
    for f in cap.iter() {
        w.write_frame(f).unwrap();
    }
    let back = pcap_file::parse(&w.into_inner()).expect("written capture re-reads");
    assert_eq!(back, cap);
    // Through the io::Read entry point as well.
    assert_eq!(pcap_file::read(data).as_ref(), Ok(&cap));
}

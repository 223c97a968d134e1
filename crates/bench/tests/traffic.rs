//! Traffic engine on real namespaces (root only; skipped otherwise).

use bench::plan::TesterBackend;
use bench::sizes::FrameSize;
use bench::traffic::calibrate;

#[test]
fn loopback_calibration_gives_a_positive_rate() {
    if !testbed::require_root("loopback_calibration_gives_a_positive_rate") {
        return;
    }
    let c = calibrate(TesterBackend::AfXdp, &[FrameSize::Fixed(64)], false).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&c).unwrap());
    assert!(c.sizes[0].max_rate_fps > 0.0);
}

//! The sender's rate before and after a train of CNPs (issue 39) against the scenario writer's
//! own rates (`synth::scenario::rate_cut`): at 50 µs and 500 µs between CNPs (and at 4 µs,
//! ConnectX's default `min_time_between_cnps`), the medians over three trains are the rates
//! the writer set, to 0.5 % (the report's medians are whole Mb/s), and each train's window is
//! its CNP spacing (clamped to at least 10 µs).

use roce_inspect::analyze::report::DirCongestion;
use roce_inspect::analyze::{AnalyzeConfig, Analyzer};
use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};
use roce_inspect::synth::scenario::rate_cut::{Params, scenario};

/// The congestion of the data direction (10.0.0.1 → 10.0.0.2) after analysing `records`.
fn congestion(
    p: &Params,
) -> (
    DirCongestion,
    roce_inspect::synth::scenario::rate_cut::Truth,
) {
    let (records, truth) = scenario(p);
    let mut a = Analyzer::new(AnalyzeConfig::default());
    let dcfg = DecodeConfig::default();
    for (n, r) in records.iter().enumerate() {
        let f = decode_frame(LinkType::ETHERNET, &r.data, r.orig_len, &dcfg);
        a.push(n as u64 + 1, r.ts_ns, &f);
    }
    let report = a.finish();
    assert_eq!(report.connections.len(), 1, "one connection");
    let c = &report.connections[0].congestion;
    assert_eq!(c.len(), 1, "one direction with CNPs: {c:?}");
    (c[0].clone(), truth)
}

fn close(got: Option<f64>, want: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: no rate"));
    assert!(
        (got - want).abs() <= want * 0.005,
        "{what}: {got} Gb/s, the writer's {want}"
    );
}

#[test]
fn rates_before_and_after_cnp_trains_are_the_writers() {
    for (spacing_ns, window_ns) in [(50_000, 50_000), (500_000, 500_000), (4_000, 10_000)] {
        let p = Params {
            before_gbps: 20.0,
            after_gbps: 5.0,
            cnps: 5,
            spacing_ns,
            trains: 3,
        };
        let (d, truth) = congestion(&p);
        let what = format!("{spacing_ns} ns apart");
        assert_eq!(d.cnps, 15, "{what}");
        assert_eq!(
            d.rate_samples.len(),
            truth.trains.len(),
            "{what}: one sample a train"
        );
        for s in &d.rate_samples {
            assert_eq!((s.cnps, s.window_ns), (5, window_ns), "{what}: {s:?}");
            close(Some(s.before_gbps), truth.before_gbps, &what);
            close(Some(s.after_gbps), truth.after_gbps, &what);
        }
        assert_eq!(d.rate_window_ns, window_ns, "{what}");
        close(d.rate_before_gbps_median, truth.before_gbps, &what);
        close(d.rate_after_gbps_median, truth.after_gbps, &what);
    }
}

/// Back-to-back CNPs (the old per-CNP windows made the window after one CNP the window before
/// the next, so the two medians came out equal): a train of 20 CNPs 4 µs apart still shows the
/// cut from 25 to 10 Gb/s.
#[test]
fn back_to_back_cnps_still_show_the_cut() {
    let p = Params {
        before_gbps: 25.0,
        after_gbps: 10.0,
        cnps: 20,
        spacing_ns: 4_000,
        trains: 2,
    };
    let (d, truth) = congestion(&p);
    close(d.rate_before_gbps_median, truth.before_gbps, "before");
    close(d.rate_after_gbps_median, truth.after_gbps, "after");
    assert!(d.rate_before_gbps_median > d.rate_after_gbps_median);
}

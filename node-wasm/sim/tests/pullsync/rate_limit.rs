//! The server's per-peer rate limit, and pages at link speed without it.

use super::*;
use syncscope_proto::pullsync::RateLimit;

#[test]
fn rate_limit_holds_a_peer_to_250_chunks_per_second() {
    let config = Config::default().with_rate_limit(Some(RateLimit::BEE));
    let (pair, _) = bin0_synced(config, 2000, 32);
    let delivered = pair.delivered();
    assert_eq!(delivered.len(), 2000);
    // The first two pages use the burst; every later page waits for 250 tokens (1 s).
    let page_starts: Vec<Instant> = delivered.iter().step_by(250).map(|d| d.0).collect();
    let gaps: Vec<Duration> = page_starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps[0] < Duration::from_millis(100), "burst page waited {:?}", gaps[0]);
    // The first throttled page waited less by the round trips the burst pages spent.
    assert!(gaps[1] <= Duration::from_secs(1));
    for gap in &gaps[2..] {
        assert_eq!(*gap, Duration::from_secs(1));
    }
    // Pages 3 to 7 (1250 chunks) took from the start of page 3 to the start of page 8.
    let span = delivered[1750].0 - delivered[500].0;
    let rate = 1250.0 / span.as_secs_f64();
    assert!((rate - 250.0).abs() < 15.0, "sustained {rate} chunks/s");
    assert!(pair.server().server_stats().throttled >= 6);
    // The per-second delivery series shows the limiter exactly: one page per second.
    let per_second = pair.deliveries_per_second();
    assert_eq!(per_second[per_second.len() - 6..], [250; 6]);
    assert_eq!(per_second.iter().sum::<u64>(), 2000);
}

#[test]
fn without_rate_limit_pages_follow_each_other_at_link_speed() {
    let (pair, _) = bin0_synced(Config::default(), 2000, 32);
    let span = pair.delivered()[1999].0 - pair.delivered()[0].0;
    // Seven more pages, each one round trip for Get/Offer and one for Want/Delivery.
    assert_eq!(span, LATENCY * 4 * 7);
}

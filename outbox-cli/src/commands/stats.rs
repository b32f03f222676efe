//! `outbox stats`.

use outbox_core::{CleanupStats, CleanupThresholds, EmissionStatus, OutboxStats, Result};

use crate::args::StatsArgs;
use crate::backend::Target;

/// The cleanup warning thresholds, the defaults where a flag is not given.
fn thresholds(args: &StatsArgs) -> CleanupThresholds {
    let mut limits = CleanupThresholds::default();
    if let Some(age) = args.warn_snapshot_age {
        limits.snapshot_open_for = age.to_std().unwrap_or(limits.snapshot_open_for);
    }
    if let Some(rows) = args.warn_dead_rows {
        limits.dead_rows = rows;
    }
    if let Some(entries) = args.warn_dead_index_entries {
        limits.dead_index_entries = entries;
    }
    limits
}

/// The stats as one JSON object, counts keyed by status name.
pub(crate) fn to_json(stats: &OutboxStats) -> serde_json::Value {
    let counts: serde_json::Map<String, serde_json::Value> = EmissionStatus::ALL
        .into_iter()
        .map(|s| (s.as_str().to_owned(), stats.count(s).into()))
        .collect();
    let oldest_age = stats
        .oldest_pending_created_at
        .map(|t| (stats.at - t).num_milliseconds() as f64 / 1000.0);
    serde_json::json!({
        "at": stats.at,
        "counts": counts,
        "oldest_pending_age_seconds": oldest_age,
        "retry_ready": stats.retry_ready,
        "claims_in_flight": stats.claims_in_flight,
        "expired_leases": stats.expired_leases,
        "claims_made": stats.claims_made,
        "delivered_estimated": stats.delivered_estimated,
        "cleanup": stats.cleanup.as_ref().map(cleanup_json),
    })
}

/// Dead rows and the oldest held snapshot (PostgreSQL), as JSON.
fn cleanup_json(c: &CleanupStats) -> serde_json::Value {
    let held = c.oldest_snapshot.as_ref().map(|h| {
        serde_json::json!({
            "xmin_age": h.xmin_age,
            "open_for_seconds": h.open_for.map(|d| d.as_secs_f64()),
            "holder": h.holder,
        })
    });
    serde_json::json!({
        "dead_rows": c.dead_rows,
        "live_rows": c.live_rows,
        "dead_index_entries": c.dead_index_entries,
        "oldest_snapshot": held,
    })
}

/// The stats as aligned text lines.
pub(crate) fn to_text(stats: &OutboxStats) -> String {
    let mut out = String::new();
    for s in EmissionStatus::ALL {
        let estimated = s == EmissionStatus::Delivered && stats.delivered_estimated;
        let note = if estimated { "  (estimate)" } else { "" };
        out.push_str(&format!(
            "{:<18} {:>10}{note}\n",
            s.as_str(),
            stats.count(s)
        ));
    }
    let oldest = match stats.oldest_pending_created_at {
        Some(t) => format!("{:.1} s", (stats.at - t).num_milliseconds() as f64 / 1000.0),
        None => "-".to_owned(),
    };
    out.push_str(&format!("{:<18} {:>10}\n", "oldest pending age", oldest));
    out.push_str(&format!(
        "{:<18} {:>10}\n",
        "retry-ready now", stats.retry_ready
    ));
    out.push_str(&format!(
        "{:<18} {:>10}\n",
        "claims in flight", stats.claims_in_flight
    ));
    out.push_str(&format!(
        "{:<18} {:>10}\n",
        "expired leases", stats.expired_leases
    ));
    if let Some(claims) = stats.claims_made {
        out.push_str(&format!("{:<18} {:>10}\n", "claims made", claims));
    }
    if let Some(c) = &stats.cleanup {
        out.push_str(&format!("{:<18} {:>10}\n", "dead rows", c.dead_rows));
        out.push_str(&format!("{:<18} {:>10}\n", "live rows", c.live_rows));
        out.push_str(&format!(
            "{:<18} {:>10}\n",
            "dead index entries", c.dead_index_entries
        ));
        let held = match &c.oldest_snapshot {
            Some(h) => {
                let open = h
                    .open_for
                    .map_or_else(|| "-".to_owned(), |d| format!("{:.1} s", d.as_secs_f64()));
                format!("{open:>10}  {}, {} transactions old", h.holder, h.xmin_age)
            }
            None => format!("{:>10}", "-"),
        };
        out.push_str(&format!("{:<18} {held}\n", "oldest snapshot"));
    }
    out
}

/// Prints the stats of `target`'s table (live or exact), as text or JSON, with the
/// cleanup warnings past their thresholds.
pub(crate) async fn run(target: &Target, args: StatsArgs) -> Result<()> {
    let limits = &thresholds(&args);
    let (json, exact) = (args.json, args.exact);
    let store = target.open_for_reading().await?;
    let stats = if exact {
        store.stats(&outbox_core::StatsRequest::new()).await?
    } else {
        store.live_stats(&outbox_core::StatsRequest::new()).await?
    };
    let holds = crate::route_holds::read(&*store).await?;
    if json {
        let mut value = to_json(&stats);
        value["route_holds"] = holds.json();
        out!("{value}");
    } else {
        out_raw!("{}{}", to_text(&stats), holds.text());
    }
    for (hold, n, _) in &holds.routes {
        eprintln!(
            "outbox: warning: {} entries held for a failing route, {} ({}): they are \
             delivered once it carries again",
            holds.shown(*n),
            hold.fault.as_str(),
            hold.destination
        );
    }
    for warning in stats.cleanup.iter().flat_map(|c| c.warnings(limits)) {
        eprintln!("outbox: warning: {warning}");
    }
    Ok(())
}

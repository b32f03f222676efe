//! Targets on text an operator or a configuration hands the outbox: table names,
//! durations, store and emitter URLs.

use chrono::{TimeDelta, Utc};
use outbox_core::drain::{url_params, DrainOptions};
use outbox_core::{duration, StoreLimits, TableName, MAX_IDENTIFIER_BYTES};

use crate::Input;

/// Table and schema names: an accepted name is a bare lowercase identifier short enough
/// for the names derived from it, so it can be put into SQL quoted as it is; a refused
/// one is refused as bad input.
pub fn identifier(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (schema, table) = text.split_once('.').unwrap_or(("", &text));
    for result in [TableName::new(&text), TableName::in_schema(schema, table)] {
        match result {
            Ok(name) => {
                for part in name.schema().into_iter().chain([name.table()]) {
                    assert!(is_bare_identifier(part), "accepted {part:?}");
                    assert!(part.len() <= MAX_IDENTIFIER_BYTES - 12, "accepted {part:?}");
                }
                let sql = name.render("DROP TABLE {table}; -- {schema_prefix}{name}");
                assert_eq!(sql.matches('"').count() % 2, 0, "unbalanced quotes: {sql}");
            }
            Err(e) => assert!(e.is_invalid_input(), "{text:?} refused as {e:?}"),
        }
    }
}

fn is_bare_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Durations as flags take them (`30s`, `5m`) and as emitter URLs do (`500ms`, `5s`): an
/// accepted one is positive and reads back from how it is shown; drain options built
/// from it either validate or are refused as bad input, and options that validate are
/// ones the store takes and whose deadlines can be computed.
pub fn duration(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match duration::parse(&text) {
        Ok(d) => {
            assert!(d > TimeDelta::zero(), "{text:?} gave {d}");
            assert_eq!(duration::parse(&duration::show(d)), Ok(d), "{text:?}");
            drain_options(d);
        }
        Err(why) => assert!(!why.is_empty()),
    }
    match url_params::duration("timeout", &text) {
        Ok(d) => assert_eq!(
            duration::parse(&text).ok().and_then(|t| t.to_std().ok()),
            Some(d),
            "{text:?}"
        ),
        Err(why) => assert!(why.contains("timeout="), "{why}"),
    }
    if let Err(why) = url_params::flag("create", &text) {
        assert!(why.contains("create="), "{why}");
    }
}

/// What the command does with a parsed duration: a lease, an emit timeout, a poll
/// interval, each on its own. Options that validate must be usable: the lease is one the
/// stores accept, and every deadline computed from them fits in time.
fn drain_options(d: TimeDelta) {
    let std = d.to_std().expect("a positive duration converts");
    if DrainOptions::new().lease(d).validate().is_ok() {
        let request = outbox_core::ClaimRequest::new("fuzz", 1, d);
        if let Err(e) = StoreLimits::default().check_claim(&request) {
            panic!(
                "drain options with a lease of {d} validate, but a claim with it is refused: {e}"
            );
        }
    }
    let base = DrainOptions::new;
    let each = [
        base().lease(d),
        base().emit_timeout(std),
        base().poll_interval(std, std),
        base().shutdown_grace(std),
    ];
    for options in each {
        match options.validate() {
            Ok(()) => {
                assert!(Utc::now().checked_add_signed(d).is_some(), "{d}");
                assert!(
                    std::time::Instant::now().checked_add(std).is_some(),
                    "{std:?}"
                );
            }
            Err(e) => assert!(e.is_invalid_input(), "{e:?}"),
        }
    }
}

/// Store URLs in messages: whatever the text, redacting it never panics, and the driver
/// reading the redacted text finds no password, or a different one, where it found one
/// in the original.
pub fn store_url(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let redacted = outbox_core::redact_url(&text);
    let password = |s: &str| {
        s.parse::<tokio_postgres::Config>()
            .ok()
            .and_then(|c| c.get_password().map(<[u8]>::to_vec))
    };
    if let Some(original) = password(&text).filter(|p| !p.is_empty()) {
        assert_ne!(
            password(&redacted).as_ref(),
            Some(&original),
            "the password of {text:?} survives in {redacted:?}"
        );
    }
}

/// Emitter URLs: whatever the text, reading it as a NATS or RabbitMQ emitter URL gives
/// options or a configuration error, and never a panic. NATS gives back the server
/// address (the URL without its query); RabbitMQ the URL for its client, which keeps the
/// URL's base and none of the outbox's own parameters.
pub fn emitter_url(data: &[u8]) {
    let mut input = Input::new(data);
    let scheme = ["nats://", "tls://", "amqp://", "amqps://", ""][input.choose(5)];
    let url = format!("{scheme}{}", input.text(usize::MAX));
    if let Ok((server, _)) = outbox_nats::NatsOptions::from_url(&url) {
        assert!(url.starts_with(&server), "{url:?} gave {server:?}");
    }
    if let Ok((client, options)) = outbox_rabbitmq::RabbitOptions::from_url(&url) {
        let base = url.split('?').next().unwrap_or_default();
        assert!(client.starts_with(base), "{url:?} gave {client:?}");
        let query = client.split_once('?').map_or("", |(_, q)| q);
        for pair in query.split('&') {
            let key = pair.split('=').next().unwrap_or_default();
            let ours = ["exchange", "routing_key", "ack_timeout", "declare_exchange"];
            assert!(!ours.contains(&key), "{url:?} left {key} in {client:?}");
        }
        let _ = options.exchange_for(&input.text(64));
        let _ = options.routing_key_for(&input.text(64));
    }
    let _ = outbox_core::redact_url(&url);
}

/// Slices as `--slice` takes them (`0/4`): an accepted one names an index below its count
/// and a count from 1 to the maximum, reads back from how it is shown, and puts every
/// entry in exactly one of its count's slices; drain options built from it validate.
pub fn slice(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match text.parse::<outbox_core::Slice>() {
        Ok(slice) => {
            assert!(slice.index() < slice.count(), "{text:?} gave {slice}");
            assert!(
                slice.count() <= outbox_core::MAX_SLICES,
                "{text:?} gave {slice}"
            );
            assert_eq!(
                slice.to_string().parse::<outbox_core::Slice>().ok(),
                Some(slice),
                "{text:?}"
            );
            let key = String::from_utf8_lossy(data);
            let id = outbox_core::EntryId::new();
            for key in [Some(key.as_ref()), None] {
                let homes = (0..slice.count())
                    .filter(|&i| {
                        outbox_core::Slice::new(i, slice.count()).is_ok_and(|s| s.contains(key, id))
                    })
                    .count();
                assert_eq!(homes, 1, "{key:?} in {} slices", slice.count());
            }
            if let Err(e) = DrainOptions::new().slice(slice).validate() {
                panic!("drain options with slice {slice} refused: {e}");
            }
        }
        Err(e) => assert!(e.is_invalid_input(), "{text:?} refused as {e:?}"),
    }
}

//! `presentation/update` snapshots (docs/services.md#presentation): the host
//! treats every invalid snapshot as fatal, so the shim validates the complete
//! schema before anything is written.

use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};

/// Encoded snapshot bound (docs/services.md#snapshot-schema).
pub const MAX_SNAPSHOT_BYTES: usize = 256 * 1024;
pub const MAX_ACTIVITIES: usize = 128;
pub const MAX_NODES: usize = 256;
pub const MAX_ACTIONS: usize = 64;
pub const MAX_REFERENCES: usize = 8;
pub const MAX_ACTION_ARGUMENTS: usize = 32;
pub const MAX_TREE_DEPTH: usize = 16;
const MAX_LABEL: usize = 1024;
const MAX_BODY: usize = 64 * 1024;
const MAX_PORTABLE: u64 = (1 << 53) - 1;

const STATES: &[&str] = &[
    "empty",
    "loading",
    "pending",
    "active",
    "running",
    "succeeded",
    "failed",
    "cancelled",
    "degraded",
    "stopped",
    "unavailable",
];

type Check = Result<(), String>;

fn object<'a>(
    value: &'a Value,
    what: &str,
    allowed: &[&str],
) -> Result<&'a Map<String, Value>, String> {
    let map = value
        .as_object()
        .ok_or_else(|| format!("{what} must be an object"))?;
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!("{what} has unknown field {key:?}"));
    }
    Ok(map)
}

fn forbidden_char(c: char, body: bool) -> bool {
    if body && matches!(c, '\n' | '\r' | '\t') {
        return false;
    }
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

fn text(value: Option<&Value>, what: &str, max: usize, body: bool) -> Result<String, String> {
    let text = value
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what} must be a string"))?;
    if text.trim().is_empty() {
        return Err(format!("{what} must not be blank"));
    }
    if text.len() > max {
        return Err(format!(
            "{what} is {} bytes; the limit is {max}",
            text.len()
        ));
    }
    if text.chars().any(|c| forbidden_char(c, body)) {
        return Err(format!(
            "{what} contains a control or bidirectional-format character"
        ));
    }
    Ok(text.to_owned())
}

fn label(value: Option<&Value>, what: &str) -> Result<String, String> {
    text(value, what, MAX_LABEL, false)
}

fn id(value: Option<&Value>, what: &str) -> Result<String, String> {
    let id = label(value, what)?;
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':' | b'/'))
    {
        return Err(format!(
            "{what} {id:?} may only use ASCII letters, digits and _ - . : /"
        ));
    }
    Ok(id)
}

fn optional<T>(
    map: &Map<String, Value>,
    key: &str,
    f: impl FnOnce(&Value) -> Result<T, String>,
) -> Result<Option<T>, String> {
    map.get(key).map(f).transpose()
}

fn state(value: Option<&Value>, what: &str) -> Check {
    match value.and_then(Value::as_str) {
        Some(s) if STATES.contains(&s) => Ok(()),
        _ => Err(format!("{what} must be one of {}", STATES.join(", "))),
    }
}

fn portable(value: &Value, what: &str) -> Result<u64, String> {
    value
        .as_u64()
        .filter(|n| *n <= MAX_PORTABLE)
        .ok_or_else(|| format!("{what} must be an integer 0..=2^53-1"))
}

fn array<'a>(value: &'a Value, what: &str, max: usize) -> Result<&'a Vec<Value>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("{what} must be an array"))?;
    if items.len() > max {
        return Err(format!(
            "{what} has {} entries; the limit is {max}",
            items.len()
        ));
    }
    Ok(items)
}

fn url_allowed(url: &str) -> bool {
    let rest = match url.split_once("://") {
        Some(("http" | "https", rest)) => rest,
        _ => return false,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') || authority.is_empty() {
        return false;
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        match v6.split_once(']') {
            Some((addr, _)) => {
                return match addr.parse::<std::net::Ipv6Addr>() {
                    Ok(ip) => match ip.to_ipv4_mapped() {
                        Some(v4) => public_v4(v4),
                        None => {
                            let s = ip.segments();
                            !(ip.is_loopback()
                                || ip.is_unspecified()
                                || ip.is_multicast()
                                || (s[0] & 0xfe00) == 0xfc00
                                || (s[0] & 0xffc0) == 0xfe80)
                        }
                    },
                    Err(_) => false,
                };
            }
            None => return false,
        }
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    let host = host.to_ascii_lowercase();
    if host.is_empty()
        || host == "localhost"
        || host.ends_with(".localhost")
        || host.ends_with(".local")
    {
        return false;
    }
    match host.parse::<std::net::Ipv4Addr>() {
        Ok(ip) => public_v4(ip),
        Err(_) => true,
    }
}

fn public_v4(ip: std::net::Ipv4Addr) -> bool {
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast())
}

fn references(map: &Map<String, Value>, what: &str) -> Check {
    let Some(value) = map.get("references") else {
        return Ok(());
    };
    let items = array(value, &format!("{what}.references"), MAX_REFERENCES)?;
    let mut seen = BTreeSet::new();
    for item in items {
        let r = object(item, "reference", &["kind", "id", "label"])?;
        let kind = r.get("kind").and_then(Value::as_str).unwrap_or("");
        if !["session", "artifact", "resource", "url"].contains(&kind) {
            return Err("reference kind must be session, artifact, resource or url".into());
        }
        let rid = label(r.get("id"), "reference id")?;
        if kind == "url" && !url_allowed(&rid) {
            return Err(format!(
                "url reference {rid:?} must be an absolute public http(s) URL without user info"
            ));
        }
        optional(r, "label", |v| label(Some(v), "reference label"))?;
        if !seen.insert((kind.to_owned(), rid)) {
            return Err(format!("{what} repeats a reference"));
        }
    }
    Ok(())
}

/// Checks `snapshot` against docs/services.md#snapshot-schema; `commands`
/// are the manifest's declared commands. Returns the snapshot's revision.
pub fn check_snapshot(snapshot: &Value, commands: &[String]) -> Result<u64, String> {
    let map = object(
        snapshot,
        "snapshot",
        &["revision", "status", "activities", "collection", "actions"],
    )?;
    let revision = portable(
        map.get("revision").ok_or("snapshot.revision is required")?,
        "snapshot.revision",
    )?;
    if let Some(status) = map.get("status") {
        let s = object(status, "status", &["state", "label", "detail"])?;
        state(s.get("state"), "status.state")?;
        label(s.get("label"), "status.label")?;
        optional(s, "detail", |v| label(Some(v), "status.detail"))?;
    }
    let mut activity_ids = BTreeSet::new();
    if let Some(value) = map.get("activities") {
        for item in array(value, "activities", MAX_ACTIVITIES)? {
            let a = object(
                item,
                "activity",
                &[
                    "id",
                    "kind",
                    "state",
                    "summary",
                    "provenance",
                    "started_at_ms",
                    "completed_at_ms",
                    "metrics",
                    "references",
                ],
            )?;
            let aid = id(a.get("id"), "activity.id")?;
            id(a.get("kind"), "activity.kind")?;
            state(a.get("state"), "activity.state")?;
            label(a.get("summary"), "activity.summary")?;
            optional(a, "provenance", |v| label(Some(v), "activity.provenance"))?;
            let started = optional(a, "started_at_ms", |v| portable(v, "started_at_ms"))?;
            let completed = optional(a, "completed_at_ms", |v| portable(v, "completed_at_ms"))?;
            if let (Some(s), Some(c)) = (started, completed)
                && c < s
            {
                return Err(format!(
                    "activity {aid}: completed_at_ms precedes started_at_ms"
                ));
            }
            if let Some(metrics) = a.get("metrics") {
                let keys = [
                    "tool_calls",
                    "input_tokens",
                    "cache_read_tokens",
                    "cache_write_tokens",
                    "output_tokens",
                    "reasoning_tokens",
                    "cost_microdollars",
                ];
                let m = object(metrics, "metrics", &keys)?;
                let mut values = HashMap::new();
                for key in keys {
                    if let Some(v) = m.get(key) {
                        values.insert(key, portable(v, key)?);
                    }
                }
                if values.get("reasoning_tokens").copied().unwrap_or(0)
                    > values.get("output_tokens").copied().unwrap_or(0)
                {
                    return Err(format!(
                        "activity {aid}: reasoning_tokens exceed output_tokens"
                    ));
                }
            }
            references(a, "activity")?;
            if !activity_ids.insert(aid.clone()) {
                return Err(format!("activity id {aid} is not unique"));
            }
        }
    }
    let mut action_ids = BTreeSet::new();
    if let Some(value) = map.get("actions") {
        for item in array(value, "actions", MAX_ACTIONS)? {
            let a = object(
                item,
                "action",
                &["id", "label", "command", "arguments", "destructive"],
            )?;
            let aid = id(a.get("id"), "action.id")?;
            label(a.get("label"), "action.label")?;
            let command = id(a.get("command"), "action.command")?;
            if !commands.contains(&command) {
                return Err(format!(
                    "action {aid} runs command {command:?}, which the manifest does not declare"
                ));
            }
            if let Some(args) = a.get("arguments") {
                for arg in array(args, "action.arguments", MAX_ACTION_ARGUMENTS)? {
                    label(Some(arg), "action argument")?;
                }
            }
            if a.get("destructive").is_some_and(|v| !v.is_boolean()) {
                return Err("action.destructive must be a boolean".into());
            }
            if !action_ids.insert(aid.clone()) {
                return Err(format!("action id {aid} is not unique"));
            }
        }
    }
    if let Some(collection) = map.get("collection") {
        let c = object(
            collection,
            "collection",
            &["kind", "title", "nodes", "selected_node_id", "detail"],
        )?;
        let tree = match c.get("kind").and_then(Value::as_str) {
            Some("list") => false,
            Some("tree") => true,
            _ => return Err("collection.kind must be list or tree".into()),
        };
        label(c.get("title"), "collection.title")?;
        let mut parents: HashMap<String, Option<String>> = HashMap::new();
        if let Some(value) = c.get("nodes") {
            for item in array(value, "nodes", MAX_NODES)? {
                let n = object(
                    item,
                    "node",
                    &[
                        "id",
                        "parent_id",
                        "state",
                        "label",
                        "secondary",
                        "action_ids",
                        "references",
                    ],
                )?;
                let nid = id(n.get("id"), "node.id")?;
                let parent = optional(n, "parent_id", |v| id(Some(v), "node.parent_id"))?;
                if parent.is_some() && !tree {
                    return Err(format!("list node {nid} must not have a parent_id"));
                }
                state(n.get("state"), "node.state")?;
                label(n.get("label"), "node.label")?;
                optional(n, "secondary", |v| label(Some(v), "node.secondary"))?;
                if let Some(ids) = n.get("action_ids") {
                    let mut seen = BTreeSet::new();
                    for a in array(ids, "node.action_ids", MAX_ACTIONS)? {
                        let a = id(Some(a), "node action id")?;
                        if !action_ids.contains(&a) || !seen.insert(a.clone()) {
                            return Err(format!(
                                "node {nid}: action id {a} is unknown or repeated"
                            ));
                        }
                    }
                }
                references(n, "node")?;
                if parents.insert(nid.clone(), parent).is_some() {
                    return Err(format!("node id {nid} is not unique"));
                }
            }
        }
        for (nid, parent) in &parents {
            let mut depth = 1;
            let mut at = parent.clone();
            while let Some(p) = at {
                if p == *nid {
                    return Err(format!("node {nid} is its own ancestor"));
                }
                depth += 1;
                if depth > MAX_TREE_DEPTH {
                    return Err(format!(
                        "tree deeper than {MAX_TREE_DEPTH} levels (or cyclic)"
                    ));
                }
                at = parents
                    .get(&p)
                    .ok_or_else(|| format!("node {nid} names missing parent {p}"))?
                    .clone();
            }
        }
        let selected = optional(c, "selected_node_id", |v| id(Some(v), "selected_node_id"))?;
        if let Some(s) = &selected
            && !parents.contains_key(s)
        {
            return Err(format!("selected_node_id {s} names no node"));
        }
        if let Some(detail) = c.get("detail") {
            let d = object(
                detail,
                "detail",
                &["node_id", "title", "body", "references"],
            )?;
            if let Some(node) = optional(d, "node_id", |v| id(Some(v), "detail.node_id"))?
                && (!parents.contains_key(&node) || selected.as_ref() != Some(&node))
            {
                return Err("detail.node_id must name the selected node".into());
            }
            label(d.get("title"), "detail.title")?;
            text(d.get("body"), "detail.body", MAX_BODY, true)?;
            references(d, "detail")?;
        }
    }
    let bytes = serde_json::to_string(snapshot).map_or(usize::MAX, |s| s.len());
    if bytes > MAX_SNAPSHOT_BYTES {
        return Err(format!(
            "the snapshot is {bytes} bytes encoded; the limit is {MAX_SNAPSHOT_BYTES} (256 KiB)"
        ));
    }
    Ok(revision)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls() {
        assert!(url_allowed("https://docs.example.org/x"));
        for bad in [
            "ftp://x.org",
            "https://user@x.org",
            "http://localhost:8080",
            "http://a.local",
            "http://10.0.0.1/",
            "http://127.0.0.1",
            "http://[::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:192.168.0.1]/",
            "relative/path",
        ] {
            assert!(!url_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn tree_rules() {
        let commands = vec!["scans".to_owned()];
        let ok = json!({"revision": 1, "collection": {"kind": "tree", "title": "T", "nodes": [
            {"id": "a", "state": "active", "label": "A"},
            {"id": "b", "parent_id": "a", "state": "active", "label": "B"}]}});
        assert_eq!(check_snapshot(&ok, &commands), Ok(1));
        let cyclic = json!({"revision": 1, "collection": {"kind": "tree", "title": "T", "nodes": [
            {"id": "a", "parent_id": "b", "state": "active", "label": "A"},
            {"id": "b", "parent_id": "a", "state": "active", "label": "B"}]}});
        let err = check_snapshot(&cyclic, &commands).unwrap_err();
        // Which node of the cycle is named first follows a hash map's order.
        assert!(
            err.contains("node a is its own ancestor")
                || err.contains("node b is its own ancestor"),
            "{err}"
        );
        let list_parent = json!({"revision": 1, "collection": {"kind": "list", "title": "T", "nodes": [
            {"id": "b", "parent_id": "a", "state": "active", "label": "B"}]}});
        let err = check_snapshot(&list_parent, &commands).unwrap_err();
        assert!(
            err.contains("list node b must not have a parent_id"),
            "{err}"
        );
        let undeclared =
            json!({"revision": 1, "actions": [{"id": "x", "label": "X", "command": "nope"}]});
        assert!(
            check_snapshot(&undeclared, &commands)
                .unwrap_err()
                .contains("does not declare")
        );
        let err = check_snapshot(&json!({"revision": 1, "extra": 1}), &commands).unwrap_err();
        assert!(err.contains("unknown field \"extra\""), "{err}");
        assert!(
            check_snapshot(
                &json!({"revision": 1, "status": {"state": "running", "label": "a\u{202E}b"}}),
                &commands
            )
            .is_err()
        );
    }
}

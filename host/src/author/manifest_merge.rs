//! Writing `manifest`'s answer over an existing `extension.toml` the way an
//! author would edit it: only the values that change are touched, so every
//! comment, blank line and key order the author wrote stays where it was.

use toml_edit::{DocumentMut, Item, TableLike};

/// `existing` (the author's text) changed to hold what `rendered` holds:
/// keys `rendered` lacks are removed, new ones added at the end of their
/// table, changed values replaced in place with the old one's comments.
pub fn onto(existing: &str, rendered: &str) -> Result<String, String> {
    let mut document: DocumentMut = existing
        .parse()
        .map_err(|err: toml_edit::TomlError| err.message().to_owned())?;
    let wanted: DocumentMut = rendered
        .parse()
        .map_err(|err: toml_edit::TomlError| format!("the new manifest: {}", err.message()))?;
    merge(document.as_table_mut(), wanted.as_table());
    Ok(document.to_string())
}

fn merge(old: &mut dyn TableLike, new: &dyn TableLike) {
    let stale: Vec<String> = old
        .iter()
        .map(|(key, _)| key.to_owned())
        .filter(|key| !new.contains_key(key))
        .collect();
    for key in stale {
        old.remove(&key);
    }
    for (key, item) in new.iter() {
        match old.get_mut(key) {
            None => {
                old.insert(key, item.clone());
            }
            Some(mine) => update(mine, item),
        }
    }
}

fn update(mine: &mut Item, new: &Item) {
    if let (Some(old_table), Some(new_table)) = (mine.as_table_like_mut(), new.as_table_like()) {
        merge(old_table, new_table);
        return;
    }
    match (mine.as_value_mut(), new.as_value()) {
        (Some(old), Some(value)) => {
            if old.to_string().trim() != value.to_string().trim() {
                let decor = old.decor().clone();
                *old = value.clone();
                *old.decor_mut() = decor;
            }
        }
        _ => *mine = new.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::onto;

    #[test]
    fn comments_and_order_stay_and_only_changed_values_move() {
        let mine = "# my extension\nname = \"greeter\"   # shown in octet\nversion = \"1.0.0\"\n\n# what it runs\n[entrypoint]\ncommand = \"octet-wasm\"\nargs = [\"run\", \"greeter.wasm\"]\n\n[contributes]\n# the tools\ntools = [\"hello\"]\ncommands = [\"old\"]\n";
        let rendered = "name = \"greeter\"\nversion = \"1.0.0\"\n[entrypoint]\ncommand = \"octet-wasm\"\nargs = [\"run\", \"greeter.wasm\"]\n[contributes]\ntools = [\"hello\", \"bye\"]\nui = [\"status\"]\n";
        let out = onto(mine, rendered).unwrap();
        assert!(
            out.starts_with("# my extension\nname = \"greeter\"   # shown in octet\n"),
            "{out}"
        );
        assert!(out.contains("# what it runs\n[entrypoint]"), "{out}");
        assert!(
            out.contains("# the tools\ntools = [\"hello\", \"bye\"]"),
            "{out}"
        );
        assert!(!out.contains("commands"), "{out}");
        assert!(out.contains("ui = [\"status\"]"), "{out}");
        let again: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(again, toml::from_str::<toml::Table>(rendered).unwrap());
    }
}

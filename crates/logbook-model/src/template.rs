//! The one `{placeholder}` substitution, seed 000's path resolver syntax:
//! `{name}`, `{{name}}` (Handlebars style, as BMAD workflows write
//! `{{session_id}}`) and `{config_source}:key`. Callers decide what each
//! name means: `logbook.yaml` knows `{project-root}` and the keys before it,
//! a workflow.yaml its own keys and the bundle config's.

/// One placeholder found in a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder<'a> {
    /// `{name}`.
    Single(&'a str),
    /// `{{name}}`, trimmed.
    Double(&'a str),
    /// `{config_source}:key`: a key of the bundle config.
    ConfigSource(&'a str),
}

impl std::fmt::Display for Placeholder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placeholder::Single(n) => write!(f, "{{{n}}}"),
            Placeholder::Double(n) => write!(f, "{{{{{n}}}}}"),
            Placeholder::ConfigSource(k) => write!(f, "{{config_source}}:{k}"),
        }
    }
}

/// Substitutes every placeholder of `template` with what `value` returns
/// for it; the first error (a sentence naming what is wrong) stops it, so
/// nothing is ever left half-substituted.
pub fn render(
    template: &str,
    mut value: impl FnMut(Placeholder<'_>) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        if let Some(inner) = after.strip_prefix("{{") {
            let Some(end) = inner.find("}}") else {
                return Err(format!("unclosed '{{{{' in {template:?}"));
            };
            out.push_str(&value(Placeholder::Double(inner[..end].trim()))?);
            rest = &inner[end + 2..];
            continue;
        }
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed '{{' in {template:?}"));
        };
        let name = &after[1..end];
        rest = &after[end + 1..];
        let placeholder = match (name, rest.strip_prefix(':')) {
            ("config_source", Some(tail)) => {
                let len = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                    .unwrap_or(tail.len());
                rest = &tail[len..];
                Placeholder::ConfigSource(&tail[..len])
            }
            _ => Placeholder::Single(name),
        };
        out.push_str(&value(placeholder)?);
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &str) -> Result<String, String> {
        render(t, |p| Ok(format!("<{p}>")))
    }

    #[test]
    fn every_form() {
        assert_eq!(names("a/{x}/b").unwrap(), "a/<{x}>/b");
        assert_eq!(names("{{ session_id }}.md").unwrap(), "<{{session_id}}>.md");
        assert_eq!(
            names("{config_source}:agent_outputs_folder/x").unwrap(),
            "<{config_source}:agent_outputs_folder>/x"
        );
        assert_eq!(names("{config_source}/x").unwrap(), "<{config_source}>/x");
        assert_eq!(names("plain").unwrap(), "plain");
    }

    #[test]
    fn unclosed_is_an_error() {
        assert!(names("a/{x").unwrap_err().contains("unclosed"));
        assert!(names("{{x}").unwrap_err().contains("unclosed"));
    }

    #[test]
    fn the_first_error_stops() {
        let mut seen = vec![];
        let r = render("{a}{b}{c}", |p| {
            seen.push(p.to_string());
            if p == Placeholder::Single("b") {
                Err("no b".into())
            } else {
                Ok(String::new())
            }
        });
        assert_eq!(r.unwrap_err(), "no b");
        assert_eq!(seen, ["{a}", "{b}"]);
    }
}

//! A changed JSON value written back into the text it was read from, so
//! that every byte the change does not own stays as it was: another
//! tool's `1e3` is not rewritten `1e+3`, its `"\u00e9"` not `"é"`, its
//! layout not re-indented. Used where Logbook edits files that belong to
//! people and other tools (the agents' settings files).
//!
//! Only members and elements the change touched are written anew; the
//! rest is copied from the text, with the separators around it. A change
//! this cannot place (keys reordered, an element added in the middle) is
//! `None`: the caller writes the whole value instead.

use serde_json::Value;

/// Where a value sits in the text, and where its members do.
struct Span {
    start: usize,
    end: usize,
    members: Vec<Member>,
}

/// One member of an object (with its key) or element of an array.
struct Member {
    /// Where the member starts: its key, or the element itself.
    start: usize,
    /// Its value.
    value: Span,
}

/// `text` (whose value is `old`) with `old` changed to `new`, keeping the
/// bytes of all that did not change; `None` when the change cannot be
/// placed in the text (see the module doc).
pub fn json_over(text: &str, old: &Value, new: &Value) -> Option<String> {
    let mut p = Scan {
        b: text.as_bytes(),
        i: 0,
    };
    let span = p.value()?;
    let unit = indent_unit(text);
    let mut out = String::with_capacity(text.len() + 256);
    out.push_str(text.get(..span.start)?);
    splice(text, &span, old, new, unit, &mut out)?;
    out.push_str(text.get(span.end..)?);
    Some(out)
}

/// The file's indentation step: the white space that starts its second
/// line, else two spaces.
fn indent_unit(text: &str) -> &str {
    let Some((_, rest)) = text.split_once('\n') else {
        return "  ";
    };
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    if n == 0 { "  " } else { &rest[..n] }
}

fn splice(
    text: &str,
    span: &Span,
    old: &Value,
    new: &Value,
    unit: &str,
    out: &mut String,
) -> Option<()> {
    if old == new {
        out.push_str(text.get(span.start..span.end)?);
        return Some(());
    }
    let Some((olds, news)) = paired(old, new, span.members.len()) else {
        out.push_str(&fresh(new, &indent_at(text, span.start), unit)?);
        return Some(());
    };
    let keeps = kept_members(old, &olds, &news)?;
    if keeps.iter().all(Option::is_none) {
        // Nothing kept: the brackets, and the new members anew.
        out.push_str(&fresh(new, &indent_at(text, span.start), unit)?);
        return Some(());
    }
    let plan = Plan { olds, news, keeps };
    let one_line = !text.get(span.start..span.end)?.contains('\n');
    if one_line && plan.keeps.iter().any(Option::is_none) {
        return write_one_per_line(text, span, old.is_object(), &plan, unit, out);
    }
    write_in_place(text, span, &plan, unit, out)
}

/// How the new members of a container are written over the old ones.
struct Plan<'a> {
    /// The old value, member by member, as the text lists them.
    olds: Vec<&'a Value>,
    /// The new members, with their keys when the value is an object.
    news: Vec<NewMember<'a>>,
    /// For each new member, the old one it keeps, or none (added).
    keeps: Vec<Option<usize>>,
}

/// A new member: its key when the value is an object, and its value.
type NewMember<'a> = (Option<&'a String>, &'a Value);

/// The old and new members side by side, when both are objects or both
/// arrays and the old one has as many members as the text lists; else
/// the value is written anew.
fn paired<'a>(
    old: &'a Value,
    new: &'a Value,
    listed: usize,
) -> Option<(Vec<&'a Value>, Vec<NewMember<'a>>)> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) if o.len() == listed => Some((
            o.values().collect(),
            n.iter().map(|(k, v)| (Some(k), v)).collect(),
        )),
        (Value::Array(o), Value::Array(n)) if o.len() == listed => {
            Some((o.iter().collect(), n.iter().map(|v| (None, v)).collect()))
        }
        _ => None,
    }
}

/// Each new member: the old one it keeps (in the text's order), or none
/// (added, only after every kept one); `None` when the change cannot be
/// placed (keys reordered, an element added in the middle).
fn kept_members(old: &Value, olds: &[&Value], news: &[NewMember]) -> Option<Vec<Option<usize>>> {
    let old_keys: Vec<Option<&String>> = match old {
        Value::Object(o) => o.keys().map(Some).collect(),
        _ => vec![None; olds.len()],
    };
    let mut plan: Vec<Option<usize>> = vec![];
    let mut next = 0;
    for (j, (key, value)) in news.iter().enumerate() {
        let found = match key {
            Some(k) => old_keys.iter().position(|ok| ok == &Some(*k)),
            None => (next..olds.len()).find(|&i| olds[i] == *value).or_else(|| {
                // Changed in place, unless that old element comes later.
                (next < olds.len() && !news[j + 1..].iter().any(|(_, v)| *v == olds[next]))
                    .then_some(next)
            }),
        };
        match found {
            Some(i) if i >= next && plan.iter().all(Option::is_some) => {
                plan.push(Some(i));
                next = i + 1;
            }
            None if key.is_none() || !old_keys.contains(key) => plan.push(None),
            _ => return None,
        }
    }
    Some(plan)
}

/// `{"k": 1}` gaining a member: laid out one member a line, as a new file
/// would be, the kept members' bytes as they were.
fn write_one_per_line(
    text: &str,
    span: &Span,
    is_object: bool,
    plan: &Plan,
    unit: &str,
    out: &mut String,
) -> Option<()> {
    let m = &span.members;
    let base = indent_at(text, span.start);
    let inner = format!("{base}{unit}");
    let (open, close) = if is_object { ('{', '}') } else { ('[', ']') };
    out.push(open);
    for (j, step) in plan.keeps.iter().enumerate() {
        let (key, value) = plan.news[j];
        out.push_str(if j == 0 { "\n" } else { ",\n" });
        out.push_str(&inner);
        match *step {
            Some(i) => {
                out.push_str(text.get(m[i].start..m[i].value.start)?);
                splice(text, &m[i].value, plan.olds[i], value, unit, out)?;
            }
            None => {
                if let Some(k) = key {
                    out.push_str(&serde_json::to_string(k).ok()?);
                    out.push_str(": ");
                }
                out.push_str(&fresh(value, &inner, unit)?);
            }
        }
    }
    out.push('\n');
    out.push_str(&base);
    out.push(close);
    Some(())
}

/// The container in its own layout: kept members with the separators
/// around them copied, changed ones spliced, added ones after the last
/// kept one at its indentation.
fn write_in_place(
    text: &str,
    span: &Span,
    plan: &Plan,
    unit: &str,
    out: &mut String,
) -> Option<()> {
    let m = &span.members;
    let first = m.first()?;
    out.push_str(text.get(span.start..first.start)?);
    let mut last: Option<usize> = None;
    for (j, step) in plan.keeps.iter().enumerate() {
        let (key, value) = plan.news[j];
        match *step {
            Some(i) => {
                if last.is_some() {
                    out.push_str(text.get(m[i - 1].value.end..m[i].start)?);
                }
                out.push_str(text.get(m[i].start..m[i].value.start)?);
                splice(text, &m[i].value, plan.olds[i], value, unit, out)?;
                last = Some(i);
            }
            None => {
                let at = last?;
                let member_indent = indent_at(text, m[at].start);
                out.push_str(",\n");
                out.push_str(&member_indent);
                if let Some(k) = key {
                    out.push_str(&serde_json::to_string(k).ok()?);
                    out.push_str(": ");
                }
                out.push_str(&fresh(value, &member_indent, unit)?);
            }
        }
    }
    out.push_str(text.get(m.last()?.value.end..span.end)?);
    Some(())
}

/// The white space before the line's first character at byte `at`.
fn indent_at(text: &str, at: usize) -> String {
    let line = text
        .get(..at)
        .unwrap_or("")
        .rsplit('\n')
        .next()
        .unwrap_or("");
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// `value` as new pretty JSON, each line after the first at `indent`.
fn fresh(value: &Value, indent: &str, unit: &str) -> Option<String> {
    use serde::Serialize as _;
    let mut buf = vec![];
    let f = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    value
        .serialize(&mut serde_json::Serializer::with_formatter(&mut buf, f))
        .ok()?;
    let text = String::from_utf8(buf).ok()?;
    Some(text.replace('\n', &format!("\n{indent}")))
}

/// A scanner of text already known to be valid JSON: it records spans,
/// and gives up (`None`) on anything it does not expect.
struct Scan<'t> {
    b: &'t [u8],
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            match self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                _ => self.i += 1,
            }
        }
    }

    fn value(&mut self) -> Option<Span> {
        self.ws();
        let start = self.i;
        let mut members = vec![];
        match *self.b.get(self.i)? {
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                self.ws();
                if self.b.get(self.i) == Some(&close) {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        let member = self.i;
                        if open == b'{' {
                            self.string()?;
                            self.eat(b':')?;
                        }
                        let value = self.value()?;
                        members.push(Member {
                            start: member,
                            value,
                        });
                        self.ws();
                        match *self.b.get(self.i)? {
                            b',' => self.i += 1,
                            c if c == close => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
            }
            b'"' => self.string()?,
            _ => {
                while !matches!(
                    self.b.get(self.i),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.i += 1;
                }
            }
        }
        Some(Span {
            start,
            end: self.i,
            members,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edit(text: &str, change: impl FnOnce(&mut Value)) -> String {
        let old: Value = serde_json::from_str(text).unwrap();
        let mut new = old.clone();
        change(&mut new);
        let out = json_over(text, &old, &new).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), new, "{out}");
        out
    }

    #[test]
    fn what_the_change_does_not_own_keeps_its_bytes() {
        let text = "{\n    \"a\": 1e3,  \"b\": \"\\u00e9\",\n    \"hooks\": {\"Stop\": [ {\"x\": 1.50} ]}\n}";
        let out = edit(text, |v| {
            v["hooks"]["Stop"]
                .as_array_mut()
                .unwrap()
                .push(json!({"hooks": [{"command": "l"}]}));
            v["hooks"]["SessionStart"] = json!([]);
        });
        assert!(
            out.starts_with("{\n    \"a\": 1e3,  \"b\": \"\\u00e9\",\n"),
            "{out}"
        );
        assert!(out.contains("{\"x\": 1.50}"), "{out}");
        assert!(out.ends_with("\n}"), "{out}");
        // A one-line object gaining a member is laid out a member a line.
        let out = edit("{\"k\": 1e3}\n", |v| v["hooks"] = json!({"A": [1]}));
        assert_eq!(
            out,
            "{\n  \"k\": 1e3,\n  \"hooks\": {\n    \"A\": [\n      1\n    ]\n  }\n}\n"
        );
    }

    #[test]
    fn removed_members_take_their_separators_with_them() {
        let text = "{\n  \"a\": 1e3,\n  \"hooks\": {\"S\": [1]},\n  \"z\": \"\\u00e9\"\n}\n";
        let out = edit(text, |v| {
            v.as_object_mut().unwrap().shift_remove("hooks");
        });
        assert_eq!(out, "{\n  \"a\": 1e3,\n  \"z\": \"\\u00e9\"\n}\n");
        let out = edit("[1e3, 2, 3.0]", |v| {
            v.as_array_mut().unwrap().remove(0);
        });
        assert_eq!(out, "[2, 3.0]");
    }
}

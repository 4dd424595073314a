//! kubectl's JSONPath dialect (client-go's `util/jsonpath`) over a decoded JSON object, in which
//! every number is a float64 (the printer decodes with encoding/json into `interface{}`).
//!
//! The engine keeps upstream's state between runs of one printer: `{range}` narrows the list of
//! top-level nodes for the next run and its counters survive an error, so a printer run once per
//! object (`token list`) behaves as upstream's does on the second object too.

use std::rc::Rc;

use serde_json::Value;

use super::gofmt;

#[derive(Debug, Clone, Copy, Default)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

#[derive(Debug, Clone)]
enum Node {
    List(Vec<Node>),
    Text(String),
    Field(String),
    Array([Param; 3]),
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: String,
    },
    Int(i64),
    Float(f64),
    Bool(bool),
    Wildcard,
    Recursive,
    Union(Vec<Vec<Node>>),
    Identifier(String),
}

/// A value the walk yields: a part of the object, or a literal of the template.
#[derive(Debug, Clone)]
enum Val<'a> {
    Json(&'a Value),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Nothing (the object an empty `{range}` runs its body on).
    Invalid,
}

mod parse;

#[allow(unused_imports)]
use parse::*;

/// Why a JSONPath template could not be parsed or run, in the words of client-go's `jsonpath`
/// package (kubectl prints them inside its own message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JsonPathError {
    /// The template is not valid JSONPath: `unclosed action`, `unterminated array`, `invalid array
    /// index x`.
    #[error("{0}")]
    Syntax(String),
    /// A quoted string in the template has an invalid escape or quote (Go's `strconv.ErrSyntax`).
    #[error("unquote string {0} error invalid syntax")]
    Unquote(String),
    /// An identifier the template may not use there: `unrecognized identifier x`, `not in range,
    /// nothing to end`, `unrecognized filter operator x`.
    #[error("{0}")]
    Identifier(String),
    /// A field the object does not have, when missing keys are not allowed.
    #[error("{0} is not found")]
    NotFound(String),
    /// A value of the wrong kind for the step: `string is not array or slice`, `incompatible types
    /// for comparison`.
    #[error("{0}")]
    Type(String),
    /// An index or slice outside a list: `array index out of bounds: index 3, length 2`, `step must
    /// be > 0`.
    #[error("{0}")]
    Index(String),
}

// ---- evaluation ----

/// A parsed JSONPath template and the state upstream keeps between its runs.
#[derive(Debug)]
pub(crate) struct JsonPath {
    nodes: Rc<Vec<Node>>,
    root_start: usize,
    begin_range: usize,
    in_range: usize,
    end_range: usize,
    last_end: Option<usize>,
    pub(crate) allow_missing_keys: bool,
    pub(crate) output_json: bool,
}

impl JsonPath {
    /// Parses `text`; the error is upstream's parser's message.
    pub(crate) fn parse(text: &str) -> Result<Self, JsonPathError> {
        Ok(JsonPath {
            nodes: Rc::new(parse(text)?),
            root_start: 0,
            begin_range: 0,
            in_range: 0,
            end_range: 0,
            last_end: None,
            allow_missing_keys: true,
            output_json: false,
        })
    }

    /// Runs the template on `data`: the text, or upstream's error message.
    pub(crate) fn execute(&mut self, data: &Value) -> Result<String, JsonPathError> {
        let results = self.find_results(Val::Json(data))?;
        let mut out = String::new();
        for r in results {
            self.print_results(&mut out, r);
        }
        Ok(out)
    }

    fn find_results<'a>(&mut self, data: Val<'a>) -> Result<Vec<Vec<Val<'a>>>, JsonPathError> {
        let nodes = Rc::clone(&self.nodes);
        let cur = vec![data];
        let mut full = Vec::new();
        let mut i = self.root_start;
        while i < nodes.len() {
            let results = self.walk(&cur, &nodes[i])?;
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end = Some(i);
                break;
            }
            if self.begin_range > 0 {
                self.begin_range -= 1;
                self.in_range += 1;
                if results.is_empty() {
                    self.root_start = i + 1;
                    self.find_results(Val::Invalid)?;
                } else {
                    for v in results {
                        self.root_start = i + 1;
                        full.extend(self.find_results(v)?);
                    }
                }
                self.in_range -= 1;
                for k in i + 1..nodes.len() {
                    if self.last_end == Some(k) {
                        i = k;
                        break;
                    }
                }
                i += 1;
                continue;
            }
            full.push(results);
            i += 1;
        }
        Ok(full)
    }

    fn print_results(&self, out: &mut String, results: Vec<Val<'_>>) {
        if self.output_json {
            let arr = Value::Array(results.iter().map(to_value).collect());
            out.push_str(&gofmt::json(&arr, Some("    "), false));
            out.push('\n');
            return;
        }
        let n = results.len();
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Val::Json(v @ (Value::Object(_) | Value::Array(_))) => {
                    out.push_str(&gofmt::json(v, None, false))
                }
                Val::Json(v) => out.push_str(&gofmt::v(v, false)),
                Val::Str(s) => out.push_str(&s),
                Val::Int(x) => out.push_str(&x.to_string()),
                Val::Float(f) => out.push_str(&gofmt::float_v(f)),
                Val::Bool(b) => out.push_str(&b.to_string()),
                Val::Invalid => out.push_str("<no value>"),
            }
            if i + 1 != n {
                out.push(' ');
            }
        }
    }

    fn walk<'a>(&mut self, input: &[Val<'a>], node: &Node) -> Result<Vec<Val<'a>>, JsonPathError> {
        match node {
            Node::List(nodes) => self.eval_list(input, nodes),
            Node::Text(t) => Ok(vec![Val::Str(t.clone())]),
            Node::Field(name) => self.eval_field(input, name),
            Node::Array(params) => eval_array(input, *params),
            Node::Filter { left, right, op } => self.eval_filter(input, left, right, op),
            Node::Int(v) => Ok(input.iter().map(|_| Val::Int(*v)).collect()),
            Node::Float(v) => Ok(input.iter().map(|_| Val::Float(*v)).collect()),
            Node::Bool(v) => Ok(input.iter().map(|_| Val::Bool(*v)).collect()),
            Node::Wildcard => Ok(input.iter().flat_map(children).collect()),
            Node::Recursive => Ok(recursive(input)),
            Node::Union(lists) => {
                let mut out = Vec::new();
                for l in lists {
                    out.extend(self.eval_list(input, l)?);
                }
                Ok(out)
            }
            Node::Identifier(name) => match name.as_str() {
                "range" => {
                    self.begin_range += 1;
                    Ok(input.to_vec())
                }
                "end" if self.in_range > 0 => {
                    self.end_range += 1;
                    Ok(Vec::new())
                }
                "end" => Err(JsonPathError::Identifier("not in range, nothing to end".into())),
                other => Err(JsonPathError::Identifier(format!(
                    "unrecognized identifier {other}"
                ))),
            },
        }
    }

    fn eval_list<'a>(&mut self, input: &[Val<'a>], nodes: &[Node]) -> Result<Vec<Val<'a>>, JsonPathError> {
        let mut cur = input.to_vec();
        for n in nodes {
            cur = self.walk(&cur, n)?;
        }
        Ok(cur)
    }

    fn eval_field<'a>(&self, input: &[Val<'a>], name: &str) -> Result<Vec<Val<'a>>, JsonPathError> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let mut results = Vec::new();
        for v in input {
            if let Val::Json(Value::Object(map)) = v
                && let Some(found) = map.get(name)
            {
                results.push(Val::Json(found));
            }
        }
        if results.is_empty() && !self.allow_missing_keys {
            return Err(JsonPathError::NotFound(name.to_string()));
        }
        Ok(results)
    }

    fn eval_filter<'a>(
        &mut self,
        input: &[Val<'a>],
        left: &[Node],
        right: &[Node],
        op: &str,
    ) -> Result<Vec<Val<'a>>, JsonPathError> {
        let mut results = Vec::new();
        for v in input {
            let items = match v {
                Val::Json(Value::Array(items)) => items,
                other => {
                    return Err(JsonPathError::Type(format!(
                        "{} is not array or slice and cannot be filtered",
                        val_v(other)
                    )));
                }
            };
            for item in items {
                let temp = [Val::Json(item)];
                let lefts = self.eval_list(&temp, left);
                if op == "exists" {
                    if lefts.is_ok_and(|l| !l.is_empty()) {
                        results.push(Val::Json(item));
                    }
                    continue;
                }
                let lefts = lefts?;
                match lefts.len() {
                    0 => continue,
                    1 => {}
                    _ => {
                        return Err(JsonPathError::Type(
                            "can only compare one element at a time".into(),
                        ));
                    }
                }
                let rights = self.eval_list(&temp, right)?;
                match rights.len() {
                    0 => continue,
                    1 => {}
                    _ => {
                        return Err(JsonPathError::Type(
                            "can only compare one element at a time".into(),
                        ));
                    }
                }
                if compare(&lefts[0], &rights[0], op)? {
                    results.push(Val::Json(item));
                }
            }
        }
        Ok(results)
    }
}

fn to_value(v: &Val<'_>) -> Value {
    match v {
        Val::Json(v) => (*v).clone(),
        Val::Str(s) => Value::String(s.clone()),
        Val::Int(i) => Value::from(*i),
        Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Val::Bool(b) => Value::Bool(*b),
        Val::Invalid => Value::Null,
    }
}

/// `%v` of a value.
fn val_v(v: &Val<'_>) -> String {
    match v {
        Val::Json(v) => gofmt::v(v, false),
        Val::Str(s) => s.clone(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) => gofmt::float_v(*f),
        Val::Bool(b) => b.to_string(),
        Val::Invalid => "<invalid reflect.Value>".into(),
    }
}

/// The elements of a list or string, or the values of a map (in key order: Go's is random).
fn children<'a>(v: &Val<'a>) -> Vec<Val<'a>> {
    match v {
        Val::Json(Value::Object(map)) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            keys.into_iter().map(|k| Val::Json(&map[k.as_str()])).collect()
        }
        Val::Json(Value::Array(items)) => items.iter().map(Val::Json).collect(),
        // A string's elements are its bytes (Go's uint8).
        Val::Json(Value::String(s)) => s.bytes().map(|b| Val::Int(i64::from(b))).collect(),
        Val::Str(s) => s.bytes().map(|b| Val::Int(i64::from(b))).collect(),
        _ => Vec::new(),
    }
}

fn recursive<'a>(input: &[Val<'a>]) -> Vec<Val<'a>> {
    let mut result = Vec::new();
    for v in input {
        let kids = children(v);
        if !kids.is_empty() {
            result.push(v.clone());
            result.extend(recursive(&kids));
        }
    }
    result
}

fn eval_array<'a>(input: &[Val<'a>], node: [Param; 3]) -> Result<Vec<Val<'a>>, JsonPathError> {
    let mut result = Vec::new();
    for v in input {
        let items = match v {
            Val::Json(Value::Null) => continue,
            Val::Json(Value::Array(items)) => items,
            Val::Json(other) => {
                return Err(JsonPathError::Type(format!(
                    "{} is not array or slice",
                    gofmt::type_name(other, false)
                )));
            }
            Val::Str(_) => return Err(JsonPathError::Type("string is not array or slice".into())),
            Val::Int(_) => return Err(JsonPathError::Type("int is not array or slice".into())),
            Val::Float(_) => return Err(JsonPathError::Type("float64 is not array or slice".into())),
            Val::Bool(_) => return Err(JsonPathError::Type("bool is not array or slice".into())),
            Val::Invalid => {
                return Err(JsonPathError::Type(
                    "<invalid Value> is not array or slice".into(),
                ));
            }
        };
        let len = items.len() as i64;
        let mut p = node;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += len;
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += len;
        }
        if p[1].value == p[0].value {
            return Ok(result);
        }
        if p[0].value >= len || p[0].value < 0 {
            return Err(JsonPathError::Index(format!(
                "array index out of bounds: index {}, length {len}",
                p[0].value
            )));
        }
        if p[1].value > len || p[1].value < 0 {
            return Err(JsonPathError::Index(format!(
                "array index out of bounds: index {}, length {len}",
                p[1].value - 1
            )));
        }
        if p[0].value > p[1].value {
            return Err(JsonPathError::Index(format!(
                "starting index {} is greater than ending index {}",
                p[0].value, p[1].value
            )));
        }
        let slice = &items[p[0].value as usize..p[1].value as usize];
        let step = if p[2].known {
            if p[2].value <= 0 {
                return Err(JsonPathError::Index("step must be > 0".into()));
            }
            p[2].value as usize
        } else {
            1
        };
        result.extend(slice.iter().step_by(step).map(Val::Json));
    }
    Ok(result)
}

#[derive(PartialEq)]
enum Basic {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

fn basic(v: &Val<'_>) -> Result<Basic, JsonPathError> {
    Ok(match v {
        Val::Json(Value::Bool(b)) | Val::Bool(b) => Basic::Bool(*b),
        Val::Json(Value::Number(n)) => Basic::Float(n.as_f64().unwrap_or(0.0)),
        Val::Json(Value::String(s)) => Basic::Str(s.clone()),
        Val::Str(s) => Basic::Str(s.clone()),
        Val::Int(i) => Basic::Int(*i),
        Val::Float(f) => Basic::Float(*f),
        _ => return Err(JsonPathError::Type("invalid type for comparison".into())),
    })
}

/// The forked text/template comparisons: same basic kinds only (a JSON number is a float64, an
/// integer literal an int: they do not compare).
fn compare(l: &Val<'_>, r: &Val<'_>, op: &str) -> Result<bool, JsonPathError> {
    let (a, b) = (basic(l)?, basic(r)?);
    let incompatible = || {
        Err(JsonPathError::Type(
            "incompatible types for comparison".to_string(),
        ))
    };
    let eq = || -> Result<bool, JsonPathError> {
        match (&a, &b) {
            (Basic::Bool(x), Basic::Bool(y)) => Ok(x == y),
            (Basic::Int(x), Basic::Int(y)) => Ok(x == y),
            (Basic::Float(x), Basic::Float(y)) => Ok(x == y),
            (Basic::Str(x), Basic::Str(y)) => Ok(x == y),
            _ => incompatible(),
        }
    };
    let less = || -> Result<bool, JsonPathError> {
        match (&a, &b) {
            (Basic::Int(x), Basic::Int(y)) => Ok(x < y),
            (Basic::Float(x), Basic::Float(y)) => Ok(x < y),
            (Basic::Str(x), Basic::Str(y)) => Ok(x < y),
            (Basic::Bool(_), Basic::Bool(_)) => {
                Err(JsonPathError::Type("invalid type for comparison".into()))
            }
            _ => incompatible(),
        }
    };
    match op {
        "==" => eq(),
        "!=" => eq().map(|t| !t),
        "<" => less(),
        ">=" => less().map(|t| !t),
        "<=" => {
            let lt = less()?;
            if lt { Ok(true) } else { eq() }
        }
        ">" => {
            let lt = less()?;
            if lt { Ok(false) } else { eq().map(|t| !t) }
        }
        other => Err(JsonPathError::Identifier(format!(
            "unrecognized filter operator {other}"
        ))),
    }
}

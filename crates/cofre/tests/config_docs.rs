//! The operators' configuration page (docs/guide/configuration.md) against
//! the binary: its settings table must name every flag `cofre serve --help`
//! lists, with the same environment variable and default, and nothing
//! else; its table of the other commands must name every command and the
//! flags each takes. The help text is the truth (clap writes it from the
//! definitions in crates/cofre/src), so a setting added, renamed or given a
//! new default fails here until the page says so. The systemd unit's
//! settings file (deploy/cofre.env.example) must name every variable too,
//! its commented lines showing the defaults they keep.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const PAGE: &str = "docs/guide/configuration.md";
const ENV_EXAMPLE: &str = "deploy/cofre.env.example";

/// One option of a help text.
#[derive(Debug, PartialEq)]
struct HelpOption {
    flag: String,
    env: Option<String>,
    default: Option<String>,
    /// The option's description, on one line: a suggestion for a new row.
    help: String,
}

/// One row of the settings table.
#[derive(Debug, PartialEq)]
struct SettingRow {
    line: usize,
    /// `None` for a variable read outside the flags (AWS_*, COFRE_LOG).
    flag: Option<String>,
    variables: Vec<String>,
    /// The Default cell's first code span, when the cell starts with one.
    default: Option<String>,
    every_command: bool,
}

/// A table's body rows: each row's 1-based line and its cells by column.
type TableRows = Vec<(usize, BTreeMap<String, String>)>;

/// What the parser read of a settings row, for comparing in a test.
type RowSummary<'a> = (usize, Option<&'a str>, Vec<&'a str>, Option<&'a str>, bool);

/// One row of the other commands' table.
#[derive(Debug, PartialEq)]
struct CommandRow {
    line: usize,
    command: String,
    flags: BTreeSet<String>,
}

/// One `NAME=value` line of the settings file, commented out or not.
#[derive(Debug, PartialEq)]
struct EnvLine {
    line: usize,
    name: String,
    value: String,
    commented: bool,
}

fn page_path() -> PathBuf {
    repo_path(PAGE)
}

fn repo_path(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// `cofre ARGS --help`, with no `COFRE_*` variable set: clap prints the
/// value of a set variable in `[env: NAME=value]`, and this process's
/// environment is not what the page documents.
fn help(args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cofre"));
    command.args(args).arg("--help");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("COFRE_") {
            command.env_remove(name);
        }
    }
    let output = command.output().expect("run cofre --help");
    assert!(
        output.status.success(),
        "cofre {} --help failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

/// The options of a clap help text, long format (the description under
/// the flag) or short (beside it), wrapped or not: an option runs from its
/// flag line to the next flag line or section heading, and its `[env: …]`
/// and `[default: …]` are read from that text joined into one line.
/// `--help` and `--version` are left out.
fn parse_help_options(text: &str) -> Vec<HelpOption> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut in_options = false;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            // A section heading: "Options:", "Commands:", "Usage: …".
            in_options = line.trim_end() == "Options:";
            continue;
        }
        if !in_options {
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with('-')
            && let Some(at) = trimmed.find("--")
        {
            let rest = &trimmed[at + 2..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(rest.len());
            let flag = rest[..end].to_owned();
            blocks.push((flag, rest[end..].to_owned()));
            continue;
        }
        if let Some((_, body)) = blocks.last_mut() {
            body.push(' ');
            body.push_str(trimmed);
        }
    }
    blocks
        .into_iter()
        .filter(|(flag, _)| flag != "help" && flag != "version")
        .map(|(flag, body)| {
            let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
            let env = bracketed(&body, "[env: ").map(|inside| {
                inside
                    .split('=')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            });
            let default = bracketed(&body, "[default: ").map(str::to_owned);
            // Drop the value name (`<BIND>`) and the bracketed notes.
            let description = body
                .trim_start()
                .strip_prefix('<')
                .and_then(|rest| rest.split_once('>'))
                .map_or(body.as_str(), |(_, rest)| rest);
            let description = description.split(" [").next().unwrap_or_default().trim();
            HelpOption {
                flag,
                env,
                default,
                help: description.to_owned(),
            }
        })
        .collect()
}

/// What stands between `open` and the next `]`.
fn bracketed<'a>(text: &'a str, open: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let length = text[start..].find(']')?;
    Some(&text[start..start + length])
}

/// The subcommands a help text lists under "Commands:", `help` left out.
fn parse_help_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_commands = false;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            in_commands = line.trim_end() == "Commands:";
            continue;
        }
        // "  name  description"; a description's continuation is indented
        // further.
        if in_commands
            && line.starts_with("  ")
            && !line.starts_with("      ")
            && let Some(name) = line.split_whitespace().next()
            && name != "help"
        {
            commands.push(name.to_owned());
        }
    }
    commands
}

/// A Markdown table row's cells; `\|` does not split.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells
        .into_iter()
        .map(|cell| cell.trim().to_owned())
        .collect()
}

/// The contents of a cell's `code spans`, in order.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The first table whose header has every one of `columns` (compared
/// ignoring case): for each body row, its 1-based line number and its
/// cells keyed by those column names.
fn find_table(markdown: &str, columns: &[&str]) -> Result<TableRows, String> {
    let lines: Vec<&str> = markdown.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        if !line.trim_start().starts_with('|') {
            continue;
        }
        let header: Vec<String> = cells(line).iter().map(|c| c.to_lowercase()).collect();
        let Some(positions) = columns
            .iter()
            .map(|column| header.iter().position(|h| h == &column.to_lowercase()))
            .collect::<Option<Vec<usize>>>()
        else {
            continue;
        };
        let mut rows = Vec::new();
        for (offset, row) in lines[at + 1..].iter().enumerate() {
            if !row.trim_start().starts_with('|') {
                break;
            }
            let row_cells = cells(row);
            if row_cells
                .iter()
                .all(|c| c.chars().all(|c| "-: ".contains(c)))
            {
                continue; // the separator under the header
            }
            let mut named = BTreeMap::new();
            for (column, &position) in columns.iter().zip(&positions) {
                named.insert(
                    column.to_string(),
                    row_cells.get(position).cloned().unwrap_or_default(),
                );
            }
            rows.push((at + offset + 2, named));
        }
        return Ok(rows);
    }
    Err(format!(
        "{PAGE} has no table with the columns {}",
        columns.join(", ")
    ))
}

/// The settings table: columns Variable, Flag, Default (any order, more
/// columns allowed). A Flag cell names its flag in a code span (`--bind`),
/// or has none for a variable read outside the flags; "every command" in
/// it marks a setting every command reads. The Default cell starts with
/// the default in a code span, or with words when there is none.
fn parse_settings_table(markdown: &str) -> Result<Vec<SettingRow>, String> {
    let rows = find_table(markdown, &["Variable", "Flag", "Default"])?;
    Ok(rows
        .into_iter()
        .map(|(line, cells)| {
            let flag_cell = &cells["Flag"];
            let default_cell = &cells["Default"];
            SettingRow {
                line,
                flag: code_spans(flag_cell)
                    .into_iter()
                    .find_map(|span| span.strip_prefix("--"))
                    .map(|flag| flag.split_whitespace().next().unwrap_or("").to_owned()),
                variables: code_spans(&cells["Variable"])
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                default: default_cell
                    .starts_with('`')
                    .then(|| code_spans(default_cell).first().map(|s| s.to_string()))
                    .flatten(),
                every_command: flag_cell.contains("every command"),
            }
        })
        .collect())
}

/// The other commands' table: columns Command and "Its own settings". The
/// command is the first code span without its `cofre ` (`users create`);
/// its flags are every `--flag` in the settings cell's code spans.
fn parse_commands_table(markdown: &str) -> Result<Vec<CommandRow>, String> {
    let rows = find_table(markdown, &["Command", "Its own settings"])?;
    Ok(rows
        .into_iter()
        .map(|(line, cells)| {
            let command = code_spans(&cells["Command"])
                .first()
                .map(|span| span.trim_start_matches("cofre ").trim().to_owned())
                .unwrap_or_default();
            let flags = code_spans(&cells["Its own settings"])
                .into_iter()
                .flat_map(str::split_whitespace)
                .filter_map(|word| word.strip_prefix("--"))
                .map(str::to_owned)
                .collect();
            CommandRow {
                line,
                command,
                flags,
            }
        })
        .collect())
}

/// Every difference between `cofre serve --help` and the settings table,
/// each saying what to change where.
fn settings_problems(
    serve: &[HelpOption],
    globals: &BTreeSet<String>,
    rows: &[SettingRow],
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut by_flag: BTreeMap<&str, &SettingRow> = BTreeMap::new();
    for row in rows {
        if let Some(flag) = &row.flag
            && by_flag.insert(flag, row).is_some()
        {
            problems.push(format!(
                "`--{flag}` has a second row (line {}): keep one",
                row.line
            ));
        }
    }
    for option in serve {
        let flag = &option.flag;
        let Some(row) = by_flag.get(flag.as_str()) else {
            problems.push(format!(
                "`--{flag}` is a setting of `cofre serve` but {PAGE} has no row for it: add\n    \
                 | `{}` | `--{flag}`{} | {} | {} |",
                option.env.as_deref().unwrap_or("(no variable)"),
                if globals.contains(flag) {
                    " (every command)"
                } else {
                    ""
                },
                option
                    .default
                    .as_deref()
                    .map_or("unset".to_owned(), |d| format!("`{d}`")),
                option.help,
            ));
            continue;
        };
        let line = row.line;
        match &option.env {
            Some(env) if row.variables != [env.as_str()] => problems.push(format!(
                "`--{flag}` (line {line}): the binary reads `{env}`, the table says {:?}: \
                 write `{env}` in its Variable cell",
                row.variables
            )),
            None => problems.push(format!(
                "`--{flag}` (line {line}): the binary reads no variable for it: \
                 give it `env = \"COFRE_…\"` in crates/cofre/src/config.rs"
            )),
            _ => {}
        }
        match (&option.default, &row.default) {
            (Some(binary), Some(page)) if binary != page => problems.push(format!(
                "`--{flag}` (line {line}): the default is `{binary}`, the table says `{page}`: \
                 start its Default cell with `{binary}`"
            )),
            (Some(binary), None) => problems.push(format!(
                "`--{flag}` (line {line}): the default is `{binary}`, the table gives none: \
                 start its Default cell with `{binary}`"
            )),
            (None, Some(page)) => problems.push(format!(
                "`--{flag}` (line {line}): the binary has no default, the table says `{page}`: \
                 start its Default cell with words (\"unset\", …), not a code span"
            )),
            _ => {}
        }
        if row.every_command != globals.contains(flag) {
            problems.push(if row.every_command {
                format!(
                    "`--{flag}` (line {line}) is marked \"every command\" but only `serve` \
                     takes it: remove the mark"
                )
            } else {
                format!(
                    "`--{flag}` (line {line}) is read by every command: add \"(every command)\" \
                     to its Flag cell"
                )
            });
        }
    }
    let flags: BTreeSet<&str> = serve.iter().map(|o| o.flag.as_str()).collect();
    let variables: BTreeSet<&str> = serve.iter().filter_map(|o| o.env.as_deref()).collect();
    for row in rows {
        match &row.flag {
            Some(flag) if !flags.contains(flag.as_str()) => problems.push(format!(
                "`--{flag}` (line {}) is not a setting of `cofre serve` (not in `serve --help`): \
                 remove the row, or add the flag to crates/cofre/src/config.rs",
                row.line
            )),
            None => {
                for variable in &row.variables {
                    if variables.contains(variable.as_str()) {
                        problems.push(format!(
                            "`{variable}` (line {}) is read through a flag: \
                             name the flag in its row's Flag cell",
                            row.line
                        ));
                    }
                }
                if row.variables.is_empty() {
                    problems.push(format!("line {}: a row with no variable", row.line));
                }
            }
            _ => {}
        }
    }
    problems
}

/// Every difference between the commands the binary has (besides `serve`)
/// with their own flags, and the other commands' table.
fn commands_problems(
    binary: &BTreeMap<String, BTreeSet<String>>,
    rows: &[CommandRow],
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for row in rows {
        let command = &row.command;
        if !seen.insert(command.as_str()) {
            problems.push(format!(
                "`cofre {command}` has a second row (line {}): keep one",
                row.line
            ));
        }
        let Some(flags) = binary.get(command) else {
            problems.push(format!(
                "`cofre {command}` (line {}) is not a command of the binary: remove the row",
                row.line
            ));
            continue;
        };
        for flag in flags.difference(&row.flags) {
            problems.push(format!(
                "`cofre {command}` takes `--{flag}`: name it in its row (line {})",
                row.line
            ));
        }
        for flag in row.flags.difference(flags) {
            problems.push(format!(
                "`cofre {command}` (line {}) takes no `--{flag}`: remove it from the row",
                row.line
            ));
        }
    }
    for (command, flags) in binary {
        if !seen.contains(command.as_str()) {
            let flags: Vec<String> = flags.iter().map(|f| format!("`--{f}`")).collect();
            problems.push(format!(
                "`cofre {command}` has no row in the other commands' table: add one \
                 (its own settings: {})",
                if flags.is_empty() {
                    "none".to_owned()
                } else {
                    flags.join(", ")
                }
            ));
        }
    }
    problems
}

/// The settings file's assignments: `NAME=value` or `#NAME=value`, where
/// NAME is upper case; other comments are prose.
fn parse_env_example(text: &str) -> Vec<EnvLine> {
    text.lines()
        .enumerate()
        .filter_map(|(at, line)| {
            let (commented, rest) = match line.strip_prefix('#') {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            let (name, value) = rest.split_once('=')?;
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            is_name.then(|| EnvLine {
                line: at + 1,
                name: name.to_owned(),
                value: value.to_owned(),
                commented,
            })
        })
        .collect()
}

/// Every variable of `cofre serve --help` and of the page's rows without
/// a flag that the settings file leaves out, and every commented line
/// whose value is not the default it keeps.
fn env_example_problems(
    serve: &[HelpOption],
    rows: &[SettingRow],
    lines: &[EnvLine],
) -> Vec<String> {
    let mut problems = Vec::new();
    let by_name: BTreeMap<&str, &EnvLine> = lines.iter().map(|l| (l.name.as_str(), l)).collect();
    for option in serve {
        let Some(env) = &option.env else { continue };
        let default = option.default.as_deref().unwrap_or("");
        match by_name.get(env.as_str()) {
            None => problems.push(format!(
                "`{env}` (`--{}`) is not in {ENV_EXAMPLE}: add\n    # {}\n    #{env}={default}",
                option.flag, option.help
            )),
            Some(line) if line.commented && line.value != default => problems.push(format!(
                "`{env}` (line {}): a commented line keeps the default, `{default}`, \
                 but shows `{}`: write #{env}={default} (an example goes in the comment)",
                line.line, line.value
            )),
            _ => {}
        }
    }
    for row in rows.iter().filter(|row| row.flag.is_none()) {
        for variable in &row.variables {
            if !by_name.contains_key(variable.as_str()) {
                problems.push(format!(
                    "`{variable}` (line {} of {PAGE}) is not in {ENV_EXAMPLE}: add it, \
                     commented, with its default",
                    row.line
                ));
            }
        }
    }
    problems
}

/// Every command below `path` that has no subcommands, with its own long
/// flags (those every command takes left out).
fn leaf_commands(
    path: &[&str],
    globals: &BTreeSet<String>,
    into: &mut BTreeMap<String, BTreeSet<String>>,
) {
    let text = help(path);
    let subcommands = parse_help_commands(&text);
    if subcommands.is_empty() {
        let flags = parse_help_options(&text)
            .into_iter()
            .map(|option| option.flag)
            .filter(|flag| !globals.contains(flag))
            .collect();
        into.insert(path.join(" "), flags);
        return;
    }
    for subcommand in &subcommands {
        let mut deeper = path.to_vec();
        deeper.push(subcommand);
        leaf_commands(&deeper, globals, into);
    }
}

fn globals() -> BTreeSet<String> {
    parse_help_options(&help(&[]))
        .into_iter()
        .map(|option| option.flag)
        .collect()
}

fn report(what: &str, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{PAGE} and {what} disagree; fix the page (or the flag's definition in \
         crates/cofre/src) so that:\n- {}\n",
        problems.join("\n- ")
    );
}

#[test]
fn the_settings_table_is_what_cofre_serve_accepts() {
    let page = std::fs::read_to_string(page_path()).expect("read the configuration page");
    let rows = parse_settings_table(&page).unwrap_or_else(|e| panic!("{e}"));
    let serve = parse_help_options(&help(&["serve"]));
    assert!(
        serve.len() >= 10,
        "read only {} options from `cofre serve --help`: has its format changed?",
        serve.len()
    );
    report(
        "`cofre serve --help`",
        &settings_problems(&serve, &globals(), &rows),
    );
}

#[test]
fn the_commands_table_names_every_command_and_its_flags() {
    let page = std::fs::read_to_string(page_path()).expect("read the configuration page");
    let rows = parse_commands_table(&page).unwrap_or_else(|e| panic!("{e}"));
    let globals = globals();
    let mut binary = BTreeMap::new();
    leaf_commands(&[], &globals, &mut binary);
    assert!(
        binary.remove("serve").is_some(),
        "no `serve` among the commands of `cofre --help`: has its format changed?"
    );
    report(
        "the commands of `cofre --help`",
        &commands_problems(&binary, &rows),
    );
}

#[test]
fn the_settings_file_names_every_variable_with_its_default() {
    let page = std::fs::read_to_string(page_path()).expect("read the configuration page");
    let rows = parse_settings_table(&page).unwrap_or_else(|e| panic!("{e}"));
    let serve = parse_help_options(&help(&["serve"]));
    let text = std::fs::read_to_string(repo_path(ENV_EXAMPLE)).expect("read the settings file");
    let lines = parse_env_example(&text);
    assert!(
        lines.len() >= 10,
        "read only {} settings from {ENV_EXAMPLE}: has its format changed?",
        lines.len()
    );
    let problems = env_example_problems(&serve, &rows, &lines);
    assert!(
        problems.is_empty(),
        "{ENV_EXAMPLE} leaves out settings of `cofre serve --help` or {PAGE}; \
         fix the file so that:\n- {}\n",
        problems.join("\n- ")
    );
}

// The parsers, on small texts, so the checks above cannot pass by reading
// nothing.

const LONG_HELP: &str = "\
Run the API server

Usage: cofre serve [OPTIONS]

Options:
      --bind <BIND>
          Address to listen on [env: COFRE_BIND=] [default: 127.0.0.1:8080]
      --now <NOW>
          Pins the clock [env: COFRE_NOW=2026-01-01T00:00:00Z]
      --log-format <LOG_FORMAT>
          Log format on stderr [env: COFRE_LOG_FORMAT=] [default: json] [possible values: json, text]
      --metrics-token <METRICS_TOKEN>
          When set, `/metrics` answers only a bearer
          token (wrapped) [env: COFRE_METRICS_TOKEN]
      --profile <PROFILE>
          Possible values:
          - small: a year
          - heavy: ten years

          [default: small]
  -h, --help
          Print help
";

const SHORT_HELP: &str = "\
Manage API keys

Usage: cofre keys <COMMAND>

Commands:
  create  Create a key for a user and print it (shown once)
  revoke  Revoke a key by its id
  help    Print this message or the help of the given subcommand(s)

Options:
      --out <OUT>          The copy to write
      --force              Replace an existing database
  -h, --help               Print help
  -V, --version            Print version
";

#[test]
fn help_options_are_read_in_the_long_format() {
    let options = parse_help_options(LONG_HELP);
    let summary: Vec<(&str, Option<&str>, Option<&str>)> = options
        .iter()
        .map(|o| (o.flag.as_str(), o.env.as_deref(), o.default.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            ("bind", Some("COFRE_BIND"), Some("127.0.0.1:8080")),
            ("now", Some("COFRE_NOW"), None),
            ("log-format", Some("COFRE_LOG_FORMAT"), Some("json")),
            ("metrics-token", Some("COFRE_METRICS_TOKEN"), None),
            ("profile", None, Some("small")),
        ]
    );
    assert_eq!(options[0].help, "Address to listen on");
    assert_eq!(
        options[3].help,
        "When set, `/metrics` answers only a bearer token (wrapped)"
    );
}

#[test]
fn help_options_and_commands_are_read_in_the_short_format() {
    let flags: Vec<String> = parse_help_options(SHORT_HELP)
        .into_iter()
        .map(|o| o.flag)
        .collect();
    assert_eq!(flags, ["out", "force"]);
    assert_eq!(parse_help_commands(SHORT_HELP), ["create", "revoke"]);
    assert!(parse_help_commands(LONG_HELP).is_empty());
}

const PAGE_SAMPLE: &str = "\
# Configuration

| Variable | Flag | Default | Meaning |
|---|---|---|---|
| `COFRE_BIND` | `--bind` | `127.0.0.1:8080` | where |
| `COFRE_NOW` | `--now` (every command) | real clock | `a \\| b` |
| `COFRE_REQUEST_TIMEOUT` | `--request-timeout` | `10` seconds | how long |
| `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` | — | unset | the bucket's |

Text between the tables.

| Command | Its own settings | What it does |
|---|---|---|
| `cofre keys create` | `--user ID`, `--scopes` (default `read,write`) | a key |
| `cofre migrate` | none | migrates |
";

#[test]
fn the_settings_table_is_read_by_column_name() {
    let rows = parse_settings_table(PAGE_SAMPLE).unwrap();
    let summary: Vec<RowSummary> = rows
        .iter()
        .map(|r| {
            (
                r.line,
                r.flag.as_deref(),
                r.variables.iter().map(String::as_str).collect(),
                r.default.as_deref(),
                r.every_command,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                5,
                Some("bind"),
                vec!["COFRE_BIND"],
                Some("127.0.0.1:8080"),
                false
            ),
            (6, Some("now"), vec!["COFRE_NOW"], None, true),
            (
                7,
                Some("request-timeout"),
                vec!["COFRE_REQUEST_TIMEOUT"],
                Some("10"),
                false
            ),
            (
                8,
                None,
                vec!["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"],
                None,
                false
            ),
        ]
    );
    assert_eq!(cells("| `a \\| b` | c |"), ["`a | b`", "c"]);
    assert!(parse_settings_table("| Setting | Default |\n|---|---|\n").is_err());
}

#[test]
fn the_commands_table_is_read_by_column_name() {
    let rows = parse_commands_table(PAGE_SAMPLE).unwrap();
    assert_eq!(
        rows,
        [
            CommandRow {
                line: 14,
                command: "keys create".into(),
                flags: ["user", "scopes"].map(String::from).into(),
            },
            CommandRow {
                line: 15,
                command: "migrate".into(),
                flags: BTreeSet::new(),
            },
        ]
    );
}

#[test]
fn each_disagreement_is_named_with_its_fix() {
    let option = |flag: &str, env: Option<&str>, default: Option<&str>| HelpOption {
        flag: flag.into(),
        env: env.map(String::from),
        default: default.map(String::from),
        help: "What it does".into(),
    };
    let serve = [
        option("bind", Some("COFRE_BIND"), Some("127.0.0.1:8080")),
        option("now", Some("COFRE_NOW"), None),
        option("request-timeout", Some("COFRE_REQUEST_TIMEOUT"), Some("30")),
        option("budget-warning-percent", Some("COFRE_BUDGET"), Some("80")),
    ];
    let globals = BTreeSet::from(["now".to_owned(), "bind".to_owned()]);
    let mut rows = parse_settings_table(PAGE_SAMPLE).unwrap();
    rows.push(SettingRow {
        line: 99,
        flag: Some("bogus".into()),
        variables: vec!["COFRE_BOGUS".into()],
        default: None,
        every_command: false,
    });
    let problems = settings_problems(&serve, &globals, &rows);
    let expected = [
        "`--bind` (line 5) is read by every command",
        "`--request-timeout` (line 7): the default is `30`, the table says `10`",
        "`--budget-warning-percent` is a setting of `cofre serve` but",
        "| `COFRE_BUDGET` | `--budget-warning-percent` | `80` | What it does |",
        "`--bogus` (line 99) is not a setting of `cofre serve`",
    ];
    for text in expected {
        assert!(
            problems.iter().any(|p| p.contains(text)),
            "no problem says {text:?} in {problems:#?}"
        );
    }
    assert_eq!(problems.len(), 4, "{problems:#?}");

    let binary = BTreeMap::from([
        (
            "keys create".to_owned(),
            BTreeSet::from(["user".to_owned()]),
        ),
        ("openapi".to_owned(), BTreeSet::new()),
    ]);
    let problems = commands_problems(&binary, &parse_commands_table(PAGE_SAMPLE).unwrap());
    assert_eq!(
        problems,
        [
            "`cofre keys create` (line 14) takes no `--scopes`: remove it from the row",
            "`cofre migrate` (line 15) is not a command of the binary: remove the row",
            "`cofre openapi` has no row in the other commands' table: add one \
             (its own settings: none)",
        ]
    );
}

#[test]
fn the_settings_file_is_read_and_checked_line_by_line() {
    let text = "\
# Where the data lives: sqlite://PATH. A=b in prose is no setting.
COFRE_DATABASE_URL=sqlite:///var/lib/cofre/cofre.db
#COFRE_BIND=0.0.0.0:8080

#COFRE_NOW=
";
    let lines = parse_env_example(text);
    let summary: Vec<(usize, &str, &str, bool)> = lines
        .iter()
        .map(|l| (l.line, l.name.as_str(), l.value.as_str(), l.commented))
        .collect();
    assert_eq!(
        summary,
        [
            (
                2,
                "COFRE_DATABASE_URL",
                "sqlite:///var/lib/cofre/cofre.db",
                false
            ),
            (3, "COFRE_BIND", "0.0.0.0:8080", true),
            (5, "COFRE_NOW", "", true),
        ]
    );

    let option = |flag: &str, env: &str, default: Option<&str>| HelpOption {
        flag: flag.into(),
        env: Some(env.into()),
        default: default.map(String::from),
        help: "What it does".into(),
    };
    let serve = [
        option(
            "database-url",
            "COFRE_DATABASE_URL",
            Some("sqlite://cofre.db"),
        ),
        option("bind", "COFRE_BIND", Some("127.0.0.1:8080")),
        option("now", "COFRE_NOW", None),
        option("workers", "COFRE_WORKERS", None),
    ];
    let rows = parse_settings_table(PAGE_SAMPLE).unwrap();
    assert_eq!(
        env_example_problems(&serve, &rows, &lines),
        [
            "`COFRE_BIND` (line 3): a commented line keeps the default, `127.0.0.1:8080`, \
             but shows `0.0.0.0:8080`: write #COFRE_BIND=127.0.0.1:8080 (an example goes \
             in the comment)",
            "`COFRE_WORKERS` (`--workers`) is not in deploy/cofre.env.example: add\n    \
             # What it does\n    #COFRE_WORKERS=",
            "`AWS_ACCESS_KEY_ID` (line 8 of docs/guide/configuration.md) is not in \
             deploy/cofre.env.example: add it, commented, with its default",
            "`AWS_SECRET_ACCESS_KEY` (line 8 of docs/guide/configuration.md) is not in \
             deploy/cofre.env.example: add it, commented, with its default",
        ]
    );
}

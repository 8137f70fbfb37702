//! A shell command as a permission rule sees it: the simple commands it runs, each a list
//! of words as written (quotes kept, so `cargo 'test'` is not `cargo test`), or opaque.
//!
//! The split is deliberately small and fails closed: whatever could make the shell run
//! something the words do not show — a command substitution, a subshell, a redirection, a
//! comment, an unterminated quote — makes the command opaque, and no rule with a command in
//! it allows an opaque command (a person is asked instead).

/// What a command comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// The simple commands it runs, in order (`a && b; c | d` → four), each its words.
    Simple(Vec<Vec<String>>),
    /// Something the words alone do not tell.
    Opaque,
}

/// Splits `text` into its simple commands.
pub(crate) fn split(text: &str) -> Command {
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                word.push(c);
                loop {
                    match chars.next() {
                        None => return Command::Opaque,
                        Some('\'') => {
                            word.push('\'');
                            break;
                        }
                        Some(q) => word.push(q),
                    }
                }
            }
            '"' => {
                in_word = true;
                word.push(c);
                loop {
                    match chars.next() {
                        None | Some('`') => return Command::Opaque,
                        Some('$') if chars.peek() == Some(&'(') => return Command::Opaque,
                        Some('\\') => {
                            word.push('\\');
                            match chars.next() {
                                None => return Command::Opaque,
                                Some(e) => word.push(e),
                            }
                        }
                        Some('"') => {
                            word.push('"');
                            break;
                        }
                        Some(q) => word.push(q),
                    }
                }
            }
            '\\' => match chars.next() {
                None => return Command::Opaque,
                // A line continuation joins the lines.
                Some('\n') => end_word(&mut word, &mut in_word, &mut words),
                Some(e) => {
                    in_word = true;
                    word.push('\\');
                    word.push(e);
                }
            },
            '`' | '(' | ')' | '<' | '>' => return Command::Opaque,
            '$' if chars.peek() == Some(&'(') => return Command::Opaque,
            '#' if !in_word => return Command::Opaque,
            ';' | '&' | '|' | '\n' => {
                end_word(&mut word, &mut in_word, &mut words);
                // `&&`, `||`, `|&`: one separator.
                if matches!((c, chars.peek()), ('&', Some('&')) | ('|', Some('|' | '&'))) {
                    chars.next();
                }
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        commands.push(words);
    }
    Command::Simple(commands)
}

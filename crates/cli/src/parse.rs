//! Parsing a command line the same way in both executables: a negative number given to a flag
//! that takes a value (`--runs -5`) reaches that flag's value parser, which says what it
//! accepts ("'-5' is not a whole number of at least 1"), instead of being taken for an
//! unknown flag.

use clap::{Command, CommandFactory, FromArgMatches};

/// Parses `std::env::args` into `C`, exiting as clap does (status 2) on a bad command line.
pub fn parse<C: CommandFactory + FromArgMatches>() -> C {
    parse_from(std::env::args_os())
}

/// [`parse`] of the given arguments (the first is the program's name).
pub fn parse_from<C: CommandFactory + FromArgMatches, I, T>(args: I) -> C
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    try_parse_from(args).unwrap_or_else(|e| e.exit())
}

/// [`parse_from`] returning clap's error instead of exiting.
pub fn try_parse_from<C: CommandFactory + FromArgMatches, I, T>(args: I) -> Result<C, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut command = negative_numbers(C::command());
    let mut matches = command.try_get_matches_from_mut(args)?;
    C::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command))
}

/// `command` with every flag that takes a value, in every subcommand, accepting values that
/// look like negative numbers.
pub fn negative_numbers(command: Command) -> Command {
    let ids: Vec<_> = command
        .get_arguments()
        .filter(|a| a.get_action().takes_values() && !a.is_positional())
        .map(|a| a.get_id().clone())
        .collect();
    let mut command = ids.into_iter().fold(command, |c, id| {
        c.mut_arg(id, |a| a.allow_negative_numbers(true))
    });
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, negative_numbers);
    }
    command
}

#[cfg(test)]
mod tests {
    use clap::{Parser, Subcommand};

    use super::*;

    fn count(text: &str) -> Result<u32, String> {
        match text.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("'{text}' is not a whole number of at least 1")),
        }
    }

    #[derive(Debug, Parser)]
    struct Top {
        #[command(subcommand)]
        command: Sub,
    }

    #[derive(Debug, Subcommand)]
    enum Sub {
        Run {
            #[arg(long, value_parser = count)]
            runs: Option<u32>,
            #[arg(long)]
            quiet: bool,
        },
    }

    #[test]
    fn a_negative_value_reaches_the_flags_own_parser() {
        let err = try_parse_from::<Top, _, _>(["x", "run", "--runs", "-5"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("'-5' is not a whole number of at least 1"),
            "{err}"
        );
        let ok = try_parse_from::<Top, _, _>(["x", "run", "--runs", "3", "--quiet"]).unwrap();
        assert!(matches!(
            ok.command,
            Sub::Run {
                runs: Some(3),
                quiet: true
            }
        ));
        // An unknown flag is still one.
        assert!(try_parse_from::<Top, _, _>(["x", "run", "-5"]).is_err());
    }
}

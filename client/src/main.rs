//! `tcctl`: the command-line client of the tcd daemon. It talks D-Bus only:
//! it opens files with the user's own rights and hands the daemon their
//! descriptors, never paths.

mod bus;
mod cli;
mod commands;
mod host;
mod input;
mod keystore;
mod notify;
mod options;
mod output;
mod prompt;

use bus::{Failure, Where};
use clap::Parser;
use cli::{Cli, Command};
use commands::{Context, backends, favorites, headers, volumes, watch};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("tcctl: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let at = match (&cli.socket, cli.session, cli.system) {
        (_, true, _) => Where::Session,
        (_, _, true) => Where::System,
        (Some(p), _, _) => Where::Socket(p),
        _ => Where::Default,
    };
    let ctx = Context {
        at,
        notify: notify::wanted(cli.notify),
    };
    match cli.command {
        Command::Mount(a) => volumes::mount(ctx, a),
        Command::Dismount { target, all, force } => volumes::dismount(ctx, target, all, force),
        Command::List { json } => volumes::list(ctx, json),
        Command::Create(a) => volumes::create(ctx, a),
        Command::WipeCache => volumes::wipe_cache(ctx),
        Command::Info(a) => headers::info(ctx, a),
        Command::ChangePassword(a) => headers::change_password(ctx, a),
        Command::BackupHeader(a) => headers::backup(ctx, a),
        Command::RestoreHeader(a) => headers::restore(ctx, a),
        Command::Backends { json } => backends::backends(ctx, json),
        Command::Policy { action } => backends::policy(ctx, action),
        Command::Benchmark { size, json } => backends::benchmark(ctx, &size, json),
        Command::Favorites { action } => favorites::run(ctx, action),
        Command::Watch => watch::watch(ctx),
        Command::GenerateDist { dir } => cli::generate_dist(&dir),
    }
}

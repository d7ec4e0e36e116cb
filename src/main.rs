//! The `herald` binary: parses the command line and hands over to `herald::cli`.

fn main() -> std::process::ExitCode {
    herald::cli::main()
}

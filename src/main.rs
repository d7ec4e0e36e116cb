//! The `herald` binary: parses the command line and hands over to `herald::cli`.

/// jemalloc instead of glibc's malloc. Under sled's churn of small buffers
/// across many threads, glibc's per-thread arenas fragmented: resident memory
/// grew with the data written (1.1 GiB above baseline after a 100,000-recipient
/// run) and malloc showed in every profile. Measured with the bench harness:
/// jemalloc kept that run's growth near the 10,000-recipient one and raised
/// delivery throughput; mimalloc was as fast but held twice the memory per idle
/// WebSocket; capping glibc's arenas fixed memory but cost throughput.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    herald::cli::main()
}

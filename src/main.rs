//! The `herald` binary: parses the command line and hands over to `herald::cli`.

/// jemalloc instead of glibc's malloc. Under sled's churn of small buffers
/// across many threads, glibc's per-thread arenas fragmented: resident memory
/// grew with the data written (1.1 GiB above baseline after a 100,000-recipient
/// run) and malloc showed in every profile. Measured with the bench harness:
/// jemalloc kept that run's growth near the 10,000-recipient one and raised
/// delivery throughput; mimalloc was as fast but held twice the memory per idle
/// WebSocket; capping glibc's arenas fixed memory but cost throughput.
///
/// Wrapped in `Budgeted`, which feeds each allocation's size to the memory
/// budget of a template render running on the same thread (see
/// herald_engine::render): a tenant's template cannot exhaust the node's memory.
#[global_allocator]
static GLOBAL: herald_engine::render::alloc::Budgeted<tikv_jemallocator::Jemalloc> =
    herald_engine::render::alloc::Budgeted(tikv_jemallocator::Jemalloc);

fn main() -> std::process::ExitCode {
    herald::cli::main()
}

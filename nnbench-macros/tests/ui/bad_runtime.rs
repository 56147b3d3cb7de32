#[nnbench::product(ms = [1u64], runtime = fast)]
async fn unknown_flavour(ms: u64) -> u64 {
    ms
}

#[nnbench::product(ms = [1u64], runtime = multi_thread)]
fn not_async(ms: u64) -> u64 {
    ms
}

fn main() {}

#[nnbench::product(ms = [1u64, 2])]
async fn wait(ms: u64) -> u64 {
    ms
}

fn main() {}

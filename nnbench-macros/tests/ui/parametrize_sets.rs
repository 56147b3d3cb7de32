#[nnbench::parametrize([(n = 64, k = 8), (n = 256), (n = 1, k = 2, m = 3)])]
fn matmul(n: usize, k: usize) -> usize {
    n * k
}

fn main() {}

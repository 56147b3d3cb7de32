#[nnbench::product(batch = [1usize, 2], throughput = items(batch))]
fn unknown_unit(batch: usize) -> usize {
    batch
}

#[nnbench::product(batch = [1usize, 2], throughput = elements(batch, 2))]
fn two_counts(batch: usize) -> usize {
    batch
}

#[nnbench::benchmark(throughput = 1024)]
fn bare_number() -> u8 {
    1
}

#[nnbench::product(model = ["small", "large"], throughput = elements(model))]
fn not_a_count(model: &str) -> usize {
    model.len()
}

fn main() {}

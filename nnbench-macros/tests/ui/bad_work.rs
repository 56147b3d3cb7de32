#[nnbench::product(model = ["small", "large"], flops = model)]
fn not_an_amount(model: &str) -> usize {
    model.len()
}

#[nnbench::benchmark(bytes = 8, bytes = 16)]
fn given_twice() -> u8 {
    1
}

fn main() {}

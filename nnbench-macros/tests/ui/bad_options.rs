#[nnbench::benchmark(tags = "cpu", timeout = 5)]
fn startup() {}

#[nnbench::product(x = [1], name = 3)]
fn named(x: u8) -> u8 {
    x
}

fn main() {}

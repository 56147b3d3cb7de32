#[nnbench::benchmark]
fn startup() -> usize {
    (0..1000).sum()
}

#[nnbench::product(a = [1, 2, 3], b = ["x", "y"])]
fn combo(a: u32, b: &str) -> String {
    format!("{a}{b}")
}

nnbench::main!();

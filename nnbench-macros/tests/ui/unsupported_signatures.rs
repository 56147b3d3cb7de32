#[nnbench::product(x = [1])]
fn generic<T: Default>(x: u8) -> u8 {
    x
}

#[nnbench::product(x = [1])]
fn mutable(x: &mut u8) -> u8 {
    *x
}

#[nnbench::product(x = [(1, 2)])]
fn destructured((a, b): (u8, u8)) -> u8 {
    a + b
}

fn main() {}

struct Opaque;

#[nnbench::benchmark]
fn opaque() -> Opaque {
    Opaque
}

fn main() {}

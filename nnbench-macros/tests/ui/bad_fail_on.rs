#[nnbench::benchmark(fail_on = "time=10%,rss=lots")]
fn fat() -> Vec<u8> {
    vec![0; 1024]
}

#[nnbench::benchmark(fail_on = "speed=5%")]
fn fast() {}

#[nnbench::benchmark(fail_on = 10)]
fn numbered() {}

fn main() {}

//! Peak floating point operations a second of one core: independent chains
//! of fused multiply-adds on the widest vectors the CPU has, chosen at run
//! time.
//!
//! Each chain is `acc = acc · a + b`, which converges to 1 (no overflow,
//! no subnormals to slow it down). A fused multiply-add has a latency of
//! several cycles and two units start one each cycle on current x86 and
//! Arm cores, so [`CHAINS`] chains, more than latency times units, keep
//! every unit busy; that many vectors still fit the registers (32 with
//! AVX-512 and NEON, 16 with AVX2: twelve chains there).

use std::hint::black_box;

/// Independent chains on a 32-register set.
const CHAINS: usize = 16;

/// The vector units a kernel uses, in the order they are preferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Units {
    /// 512-bit fused multiply-add (x86-64 AVX-512F).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx512,
    /// 256-bit fused multiply-add (x86-64 AVX2 and FMA).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx2Fma,
    /// 128-bit fused multiply-add (AArch64 NEON).
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    Neon,
    /// Scalar multiply and add, where none of the above is there.
    Scalar,
}

impl Units {
    /// The widest this CPU has.
    pub(crate) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Units::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Units::Avx2Fma;
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            return Units::Neon;
        }
        #[allow(unreachable_code)]
        Units::Scalar
    }

    /// How the record names them.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Units::Avx512 => "avx512f fma",
            Units::Avx2Fma => "avx2 fma",
            Units::Neon => "neon fma",
            Units::Scalar => "scalar",
        }
    }
}

/// The float types measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Precision {
    F32,
    F64,
}

/// Floating point operations done by `steps` steps of the kernel of
/// `units` in `precision`: each step, every chain does a multiply and an
/// add on each lane.
pub(crate) fn flops(units: Units, precision: Precision, steps: u64) -> f64 {
    let width = match precision {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    let lanes = match units {
        Units::Avx512 => 64 / width,
        Units::Avx2Fma => 32 / width,
        Units::Neon => 16 / width,
        Units::Scalar => 1,
    };
    let chains = match units {
        Units::Avx2Fma => 12,
        _ => CHAINS,
    };
    2.0 * (chains * lanes) as f64 * steps as f64
}

/// Runs `steps` steps of the kernel; returns a value the chains end at, so
/// that none of the work can be left out.
pub(crate) fn run(units: Units, precision: Precision, steps: u64) -> f64 {
    let steps = black_box(steps);
    match (units, precision) {
        #[cfg(target_arch = "x86_64")]
        (Units::Avx512, Precision::F64) => unsafe { x86::avx512_f64(steps) },
        #[cfg(target_arch = "x86_64")]
        (Units::Avx512, Precision::F32) => unsafe { x86::avx512_f32(steps) },
        #[cfg(target_arch = "x86_64")]
        (Units::Avx2Fma, Precision::F64) => unsafe { x86::avx2_f64(steps) },
        #[cfg(target_arch = "x86_64")]
        (Units::Avx2Fma, Precision::F32) => unsafe { x86::avx2_f32(steps) },
        #[cfg(target_arch = "aarch64")]
        (Units::Neon, Precision::F64) => unsafe { arm::neon_f64(steps) },
        #[cfg(target_arch = "aarch64")]
        (Units::Neon, Precision::F32) => unsafe { arm::neon_f32(steps) },
        (_, Precision::F64) => scalar_f64(steps),
        (_, Precision::F32) => scalar_f32(steps) as f64,
    }
}

/// `CHAINS` chains of `acc = acc · a + b` with `$fma`, from `$splat`
/// vectors, summed at the end with `$sum` into one lane's value.
macro_rules! chains {
    ($steps:expr, $splat:expr, $fma:expr, $sum:expr, $($acc:ident),+) => {{
        // Opaque, so that the compiler cannot fold the chains' fixed point.
        let a = $splat(::std::hint::black_box(0.999_999));
        let b = $splat(::std::hint::black_box(0.000_001));
        $(let mut $acc = $splat(::std::hint::black_box(1.0));)+
        for _ in 0..$steps {
            $($acc = $fma($acc, a, b);)+
        }
        0.0 $(+ $sum($acc))+
    }};
}

/// [`chains!`] with [`CHAINS`] chains, for a 32-register set.
macro_rules! sixteen_chains {
    ($steps:expr, $splat:expr, $fma:expr, $sum:expr) => {
        chains!(
            $steps, $splat, $fma, $sum, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13,
            a14, a15
        )
    };
}

/// [`chains!`] with twelve chains, for a 16-register set.
macro_rules! twelve_chains {
    ($steps:expr, $splat:expr, $fma:expr, $sum:expr) => {
        chains!(
            $steps, $splat, $fma, $sum, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11
        )
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// SAFETY: the caller has checked that the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn avx512_f64(steps: u64) -> f64 {
        sixteen_chains!(steps, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_reduce_add_pd)
    }

    /// SAFETY: the caller has checked that the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn avx512_f32(steps: u64) -> f64 {
        let sum = |v: __m512| f64::from(_mm512_reduce_add_ps(v));
        sixteen_chains!(steps, _mm512_set1_ps, _mm512_fmadd_ps, sum)
    }

    /// The lanes of `v` summed.
    #[target_feature(enable = "avx2")]
    fn sum256_pd(v: __m256d) -> f64 {
        let mut lanes = [0.0; 4];
        // SAFETY: `lanes` holds four doubles, the store's width.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), v) };
        lanes.iter().sum()
    }

    /// The lanes of `v` summed.
    #[target_feature(enable = "avx2")]
    fn sum256_ps(v: __m256) -> f64 {
        let mut lanes = [0.0f32; 8];
        // SAFETY: `lanes` holds eight floats, the store's width.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), v) };
        lanes.iter().map(|&l| f64::from(l)).sum()
    }

    /// SAFETY: the caller has checked that the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_f64(steps: u64) -> f64 {
        twelve_chains!(steps, _mm256_set1_pd, _mm256_fmadd_pd, sum256_pd)
    }

    /// SAFETY: the caller has checked that the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_f32(steps: u64) -> f64 {
        twelve_chains!(steps, _mm256_set1_ps, _mm256_fmadd_ps, sum256_ps)
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::*;

    /// `acc + a · b` in the argument order of the other kernels.
    #[target_feature(enable = "neon")]
    fn fma_f64(acc: float64x2_t, a: float64x2_t, b: float64x2_t) -> float64x2_t {
        vfmaq_f64(b, acc, a)
    }

    #[target_feature(enable = "neon")]
    fn fma_f32(acc: float32x4_t, a: float32x4_t, b: float32x4_t) -> float32x4_t {
        vfmaq_f32(b, acc, a)
    }

    #[target_feature(enable = "neon")]
    fn sum_f32(v: float32x4_t) -> f64 {
        f64::from(vaddvq_f32(v))
    }

    /// SAFETY: NEON is part of every AArch64 CPU Rust targets.
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn neon_f64(steps: u64) -> f64 {
        sixteen_chains!(steps, vdupq_n_f64, fma_f64, vaddvq_f64)
    }

    /// SAFETY: NEON is part of every AArch64 CPU Rust targets.
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn neon_f32(steps: u64) -> f64 {
        sixteen_chains!(steps, vdupq_n_f32, fma_f32, sum_f32)
    }
}

/// Scalar chains: a multiply and an add, which the compiler may fuse.
fn scalar_f64(steps: u64) -> f64 {
    let same = |x: f64| x;
    let step = |acc: f64, a: f64, b: f64| acc * a + b;
    sixteen_chains!(steps, same, step, same)
}

fn scalar_f32(steps: u64) -> f32 {
    let same = |x: f32| x;
    let step = |acc: f32, a: f32, b: f32| acc * a + b;
    sixteen_chains!(steps, same, step, same)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_converges_and_counts_its_operations() {
        let units = Units::detect();
        for precision in [Precision::F32, Precision::F64] {
            for kernel in [units, Units::Scalar] {
                let end = run(kernel, precision, 10_000);
                let lanes = flops(kernel, precision, 1) / 2.0;
                // Every lane of every chain ends near 1.
                assert!(
                    (end / lanes - 1.0).abs() < 0.05,
                    "{kernel:?} {precision:?}: {end}"
                );
                assert_eq!(
                    flops(kernel, precision, 10),
                    10.0 * flops(kernel, precision, 1)
                );
            }
        }
    }
}

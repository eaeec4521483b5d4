//! The clock a CPU peak is computed with: measured on this core when the measurement can be
//! trusted, else what the system says, and always with the sources it was checked against.
//!
//! The measurement times two dependent chains whose latencies are known: register-to-register
//! `add`s (1 cycle each on every x86-64 core) and 32-bit `imul`s (3 cycles each on Intel since
//! Nehalem, on the Atom line since Goldmont and on every AMD core since K8). A chain of `add`s
//! with an immediate is not enough: Intel's Golden Cove and later cores (Sapphire and Emerald
//! Rapids Xeons) execute dependent `add reg, imm` at rename, several per cycle, and such a
//! chain measured a 2.1 GHz Xeon at 7.1 and 10.1 GHz. An `add` of a register whose value the
//! renamer does not know, and a multiply, cannot be folded, fused or eliminated; and the two
//! chains run on different units with different latencies, so when both give the same clock
//! neither was shortened. The result must also lie within the range the system's own figures
//! allow ([`ClockSources::plausible`]): `/proc/cpuinfo`'s model name ("@ 2.10GHz", the rated
//! base clock), the TSC's rate (the base clock wherever `constant_tsc` is set), `cpu MHz` (in a
//! VM the same base clock; on bare metal the current one) and cpufreq's limits where the
//! kernel has them. A measurement that fails either check is not used, and the clock's source
//! says which figure was used instead and why.

use crate::device::CpuInfo;

/// The highest single-core boost clock of a server or desktop x86 part over its base clock:
/// about 2.5 (Xeon w9-3495X: 1.9 to 4.8 GHz; EPYC and Xeon Scalable parts stay below 2). A
/// "measured" clock above 3 × the base is a chain the CPU shortened, not a clock. (Laptop parts
/// boost up to 3.4 × their base, but on bare metal they have cpufreq, whose maximum is used.)
pub const MAX_BOOST_OVER_BASE: f64 = 3.0;
/// A core runs below its base clock only when throttled; a measurement below half the base
/// clock is a preempted or broken measurement.
pub const MIN_OVER_BASE: f64 = 0.5;
/// Margin around cpufreq's limits for the timing's own error.
pub const CPUFREQ_MARGIN: f64 = 0.1;
/// How far apart the `add` and `imul` chains' clocks may be and still agree.
pub const CHAINS_AGREE_WITHIN: f64 = 0.1;
/// Nominal sources further apart than this are reported as disagreeing.
const SOURCES_AGREE_WITHIN: f64 = 0.1;

/// The clock a CPU peak is computed with, and where it came from. Vendor, family and the
/// nominal clock are [`CpuInfo`]'s (the one reading of `/proc/cpuinfo`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuClock {
    /// In MHz: measured when the measurement passes its checks, else cpufreq's maximum, else
    /// the base clock of [`ClockSources::base`].
    pub mhz: Option<f64>,
    pub mhz_source: String,
}

/// What the system says the clock is, each figure in MHz where it is known.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClockSources {
    /// "@ 2.10GHz" at the end of `/proc/cpuinfo`'s model name (Intel's brand strings).
    pub model_name_mhz: Option<f64>,
    /// `/proc/cpuinfo`'s `cpu MHz`.
    pub cpuinfo_mhz: Option<f64>,
    /// The TSC's rate against the monotonic clock, when `constant_tsc` says it is fixed.
    pub tsc_mhz: Option<f64>,
    /// cpufreq's `cpuinfo_max_freq` and `cpuinfo_min_freq` (absent in most VMs).
    pub cpufreq_max_mhz: Option<f64>,
    pub cpufreq_min_mhz: Option<f64>,
}

/// The range a real clock of this CPU lies in, and what it was derived from.
#[derive(Debug, Clone, PartialEq)]
pub struct PlausibleRange {
    pub low_mhz: f64,
    pub high_mhz: f64,
    pub why: String,
}

impl PlausibleRange {
    pub fn contains(&self, mhz: f64) -> bool {
        (self.low_mhz..=self.high_mhz).contains(&mhz)
    }
}

/// The clocks two dependent chains imply, in MHz: each chain's instructions per second times
/// its latency in cycles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainClocks {
    /// Register-to-register `add`s, 1 cycle each.
    pub add_mhz: f64,
    /// 32-bit register `imul`s, 3 cycles each.
    pub imul_mhz: f64,
}

impl ChainClocks {
    /// |add − imul| relative to the larger of the two.
    pub fn spread(&self) -> f64 {
        (self.add_mhz - self.imul_mhz).abs() / self.add_mhz.max(self.imul_mhz)
    }

    pub fn agree(&self) -> bool {
        self.spread() <= CHAINS_AGREE_WITHIN
    }
}

fn ghz(mhz: f64) -> String {
    format!("{:.3} GHz", mhz / 1e3)
}

/// The clock in an Intel brand string, "... CPU @ 2.10GHz" (or "@ 2100MHz"), in MHz.
pub fn model_name_mhz(model: &str) -> Option<f64> {
    let (_, tail) = model.rsplit_once('@')?;
    let tail = tail.trim();
    let end = tail
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(tail.len());
    let value: f64 = tail[..end].parse().ok()?;
    let unit = tail[end..].trim().to_ascii_lowercase();
    let mhz = match unit.as_str() {
        "ghz" => value * 1e3,
        "mhz" => value,
        _ => return None,
    };
    (mhz > 0.0).then_some(mhz)
}

impl ClockSources {
    /// The figures `/proc/cpuinfo` gives (model name, `cpu MHz`), without cpufreq or the TSC.
    pub fn from_cpuinfo(cpu: &CpuInfo) -> ClockSources {
        ClockSources {
            model_name_mhz: model_name_mhz(&cpu.model),
            cpuinfo_mhz: cpu.nominal_mhz.filter(|m| *m > 0.0),
            ..ClockSources::default()
        }
    }

    /// Everything this machine says: `/proc/cpuinfo`, cpufreq, and the TSC's rate (timed here
    /// over 20 ms against the monotonic clock) when `cpu` has `constant_tsc`.
    pub fn read(cpu: &CpuInfo) -> ClockSources {
        let cpufreq = |name: &str| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cpufreq/{name}"))
                .ok()
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|khz| *khz > 0.0)
                .map(|khz| khz / 1e3)
        };
        ClockSources {
            tsc_mhz: if cpu.constant_tsc { tsc_mhz() } else { None },
            cpufreq_max_mhz: cpufreq("cpuinfo_max_freq"),
            cpufreq_min_mhz: cpufreq("cpuinfo_min_freq"),
            ..Self::from_cpuinfo(cpu)
        }
    }

    /// The base clock and its source: the model name's (the vendor's rating), else the TSC's
    /// rate (the base clock on any CPU with `constant_tsc`), else `cpu MHz`.
    pub fn base(&self) -> Option<(f64, &'static str)> {
        self.model_name_mhz
            .map(|m| (m, "/proc/cpuinfo's model name"))
            .or(self.tsc_mhz.map(|m| (m, "the TSC's rate")))
            .or(self.cpuinfo_mhz.map(|m| (m, "/proc/cpuinfo's cpu MHz")))
    }

    /// Every figure known, for the profile's text.
    pub fn describe(&self) -> String {
        let figures: Vec<String> = [
            ("model name", self.model_name_mhz),
            ("cpu MHz", self.cpuinfo_mhz),
            ("TSC", self.tsc_mhz),
            ("cpufreq max", self.cpufreq_max_mhz),
        ]
        .into_iter()
        .filter_map(|(name, mhz)| mhz.map(|m| format!("{name} {}", ghz(m))))
        .collect();
        if figures.is_empty() {
            "no clock in /proc/cpuinfo, cpufreq or the TSC".into()
        } else {
            figures.join(", ")
        }
    }

    /// Whether the nominal figures (model name, `cpu MHz`, TSC) disagree by more than 10 %:
    /// then the text names the one used and why.
    fn nominal_disagree(&self) -> bool {
        let known: Vec<f64> = [self.model_name_mhz, self.cpuinfo_mhz, self.tsc_mhz]
            .into_iter()
            .flatten()
            .collect();
        let (lo, hi) = known.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &m| {
            (lo.min(m), hi.max(m))
        });
        known.len() > 1 && (hi - lo) / hi > SOURCES_AGREE_WITHIN
    }

    /// The range a real clock of this CPU lies in: from half the base clock to 3 × it (the
    /// highest boost over base of a server or desktop part), widened to cpufreq's limits ±10 %
    /// where the kernel has them. `None` when nothing gives a clock.
    pub fn plausible(&self) -> Option<PlausibleRange> {
        let base = self.base();
        let (mut low, mut high, mut why) = match base {
            Some((mhz, source)) => (
                MIN_OVER_BASE * mhz,
                MAX_BOOST_OVER_BASE * mhz,
                format!(
                    "{MIN_OVER_BASE}–{MAX_BOOST_OVER_BASE} × the base clock {} of {source}",
                    ghz(mhz)
                ),
            ),
            None => (f64::INFINITY, 0.0, String::new()),
        };
        if let Some(max) = self.cpufreq_max_mhz {
            high = high.max(max * (1.0 + CPUFREQ_MARGIN));
            let min = self.cpufreq_min_mhz.unwrap_or(max);
            low = low.min(min * (1.0 - CPUFREQ_MARGIN));
            let cpufreq = format!("cpufreq's {}–{} ± 10 %", ghz(min), ghz(max));
            why = if why.is_empty() {
                cpufreq
            } else {
                format!("{why}, widened to {cpufreq}")
            };
        }
        (low <= high).then_some(PlausibleRange {
            low_mhz: low,
            high_mhz: high,
            why,
        })
    }
}

impl CpuClock {
    /// The clock of `cpu`: measured when the measurement passes its checks, else cpufreq's
    /// maximum, else the base clock.
    pub fn detect(cpu: &CpuInfo) -> CpuClock {
        let sources = ClockSources::read(cpu);
        Self::decide(&sources, measure_chains())
    }

    /// The clock from what the system says, without a measurement: cpufreq's maximum where
    /// the kernel has one, else the base clock of [`ClockSources::base`].
    pub fn from_sources(sources: &ClockSources) -> CpuClock {
        let disagree = if sources.nominal_disagree() {
            format!(
                "; the figures disagree ({}): the model name is the vendor's rated base clock and \
                 the TSC runs at it, while cpu MHz can be a momentary clock",
                sources.describe()
            )
        } else {
            String::new()
        };
        match (sources.cpufreq_max_mhz, sources.base()) {
            (Some(max), _) => CpuClock {
                mhz: Some(max),
                mhz_source: format!("cpufreq's cpuinfo_max_freq{disagree}"),
            },
            (None, Some((mhz, source))) => CpuClock {
                mhz: Some(mhz),
                mhz_source: format!("{source}, the base clock (no cpufreq){disagree}"),
            },
            (None, None) => CpuClock {
                mhz: None,
                mhz_source: sources.describe(),
            },
        }
    }

    /// The measured clock (the `add` chain's) when the two chains agree within 10 % and it lies
    /// in [`ClockSources::plausible`]'s range; otherwise [`Self::from_sources`], with the
    /// measurement and the reason it was not used.
    pub fn decide(sources: &ClockSources, chains: Option<ChainClocks>) -> CpuClock {
        let Some(chains) = chains else {
            return Self::from_sources(sources);
        };
        let measured = format!(
            "a chain of dependent register adds (1 cycle each) at {}, one of imuls (3 cycles \
             each) at {}",
            ghz(chains.add_mhz),
            ghz(chains.imul_mhz)
        );
        let range = sources.plausible();
        let rejected = if !chains.agree() {
            Some(format!(
                "{measured}: {:.0} % apart, so one of them was shortened by the CPU",
                100.0 * chains.spread()
            ))
        } else {
            match &range {
                Some(r) if !r.contains(chains.add_mhz) => Some(format!(
                    "{measured}: outside {}–{} ({})",
                    ghz(r.low_mhz),
                    ghz(r.high_mhz),
                    r.why
                )),
                _ => None,
            }
        };
        if let Some(reason) = rejected {
            let fallback = Self::from_sources(sources);
            return CpuClock {
                mhz_source: format!(
                    "{} (the measured clock is not used: {reason})",
                    fallback.mhz_source
                ),
                ..fallback
            };
        }
        let checked = match &range {
            Some(r) => format!(
                "within {}–{} ({}); {}",
                ghz(r.low_mhz),
                ghz(r.high_mhz),
                r.why,
                sources.describe()
            ),
            None => format!("nothing to check it against: {}", sources.describe()),
        };
        CpuClock {
            mhz: Some(chains.add_mhz),
            mhz_source: format!("measured: {measured}, {checked}"),
        }
    }
}

/// The TSC's rate in MHz: its ticks over 20 ms of the monotonic clock, each end read between
/// two TSC reads close together (so a preemption between the two clocks is not counted).
/// `None` off x86-64.
pub fn tsc_mhz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::_rdtsc;
        use std::time::{Duration, Instant};
        let read = || {
            let mut best = None;
            for _ in 0..5 {
                // SAFETY: RDTSC reads a counter; every x86-64 CPU has it.
                let before = unsafe { _rdtsc() };
                let now = Instant::now();
                // SAFETY: as above.
                let after = unsafe { _rdtsc() };
                let gap = after.saturating_sub(before);
                if best.is_none_or(|(g, _, _)| gap < g) {
                    best = Some((gap, now, before + gap / 2));
                }
                if gap < 20_000 {
                    break;
                }
            }
            best.map(|(_, now, tsc)| (now, tsc))
        };
        let (t0, c0) = read()?;
        std::thread::sleep(Duration::from_millis(20));
        let (t1, c1) = read()?;
        let seconds = (t1 - t0).as_secs_f64();
        (seconds > 0.0 && c1 > c0).then(|| (c1 - c0) as f64 / seconds / 1e6)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Times both chains on this core: after a warm-up (so the core has left any low-power
/// state), 15 rounds alternating the two, the best round of each (preemption only adds
/// time). `None` off x86-64: there the clock comes from cpufreq or `/proc/cpuinfo`.
pub fn measure_chains() -> Option<ChainClocks> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::time::{Duration, Instant};
        // 2^22 adds and 2^20 imuls (3 × 2^20 cycles): about a millisecond each.
        const ADD_ROUNDS: u64 = 1 << 19;
        const IMUL_ROUNDS: u64 = 1 << 17;
        let warm_until = Instant::now() + Duration::from_millis(30);
        while Instant::now() < warm_until {
            std::hint::black_box(x86::add_chain(ADD_ROUNDS));
        }
        let (mut add, mut imul) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..15 {
            add = add.min(x86::add_chain(ADD_ROUNDS));
            imul = imul.min(x86::imul_chain(IMUL_ROUNDS));
        }
        let cycles = |rounds: u64, latency: u64| (rounds * x86::PER_ROUND * latency) as f64;
        (add > 0.0 && imul > 0.0).then(|| ChainClocks {
            add_mhz: cycles(ADD_ROUNDS, 1) / add / 1e6,
            imul_mhz: cycles(IMUL_ROUNDS, 3) / imul / 1e6,
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::time::Instant;

    /// Instructions of the chain per loop round.
    pub const PER_ROUND: u64 = 8;

    /// Seconds for `rounds` × 8 dependent `add x, one`: `one` is a register, so no core can
    /// fold the add at rename as it can `add x, 1`; the loop's own `dec`/`jnz` is a separate,
    /// shorter chain.
    pub fn add_chain(rounds: u64) -> f64 {
        let one: u64 = std::hint::black_box(1);
        let mut x: u64 = std::hint::black_box(0);
        let start = Instant::now();
        // SAFETY: register arithmetic only; no memory is touched.
        unsafe {
            std::arch::asm!(
                "2:",
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                "dec {n}",
                "jnz 2b",
                x = inout(reg) x,
                one = in(reg) one,
                n = inout(reg) rounds => _,
                options(nomem, nostack),
            );
        }
        let elapsed = start.elapsed().as_secs_f64();
        std::hint::black_box(x);
        elapsed
    }

    /// Seconds for `rounds` × 8 dependent 32-bit `imul x, one` (3 cycles each: 32-bit rather
    /// than 64-bit, which takes 5 on Atom-line cores).
    pub fn imul_chain(rounds: u64) -> f64 {
        let one: u64 = std::hint::black_box(1);
        let mut x: u64 = std::hint::black_box(3);
        let start = Instant::now();
        // SAFETY: register arithmetic only; no memory is touched.
        unsafe {
            std::arch::asm!(
                "2:",
                "imul {x:e}, {one:e}", "imul {x:e}, {one:e}", "imul {x:e}, {one:e}",
                "imul {x:e}, {one:e}", "imul {x:e}, {one:e}", "imul {x:e}, {one:e}",
                "imul {x:e}, {one:e}", "imul {x:e}, {one:e}",
                "dec {n}",
                "jnz 2b",
                x = inout(reg) x,
                one = in(reg) one,
                n = inout(reg) rounds => _,
                options(nomem, nostack),
            );
        }
        let elapsed = start.elapsed().as_secs_f64();
        std::hint::black_box(x);
        elapsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Intel Xeon VM where a chain of `add reg, 1` measured 10.105 GHz.
    fn xeon_vm() -> ClockSources {
        ClockSources {
            model_name_mhz: model_name_mhz("Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz"),
            cpuinfo_mhz: Some(2100.0),
            tsc_mhz: Some(2100.004),
            ..ClockSources::default()
        }
    }

    /// This Zen 5 VM: no brand clock, `cpu MHz` and the TSC at the nominal 2.596 GHz.
    fn zen5_vm() -> ClockSources {
        ClockSources {
            model_name_mhz: model_name_mhz("AMD EPYC"),
            cpuinfo_mhz: Some(2596.132),
            tsc_mhz: Some(2596.1),
            ..ClockSources::default()
        }
    }

    #[test]
    fn the_brand_strings_clock_is_read() {
        assert_eq!(xeon_vm().model_name_mhz, Some(2100.0));
        assert_eq!(
            model_name_mhz("Intel(R) Xeon(R) CPU @ 2.20GHz"),
            Some(2200.0)
        );
        assert_eq!(model_name_mhz("Some CPU @ 2600 MHz"), Some(2600.0));
        assert_eq!(model_name_mhz("AMD EPYC 7B12"), None);
        assert_eq!(model_name_mhz("A CPU @ fast"), None);
        assert_eq!(model_name_mhz("A CPU @ 2.1THz"), None);
    }

    #[test]
    fn an_add_chain_the_cpu_shortened_is_not_taken_for_the_clock() {
        // What the immediate-add chain gave on the Xeon; the imul chain is not folded.
        let folded = ChainClocks {
            add_mhz: 10_105.0,
            imul_mhz: 3_300.0,
        };
        let clock = CpuClock::decide(&xeon_vm(), Some(folded));
        assert_eq!(clock.mhz, Some(2100.0), "{}", clock.mhz_source);
        assert!(
            clock.mhz_source.starts_with("/proc/cpuinfo's model name"),
            "{}",
            clock.mhz_source
        );
        assert!(
            clock.mhz_source.contains("not used") && clock.mhz_source.contains("67 % apart"),
            "{}",
            clock.mhz_source
        );
        // Both chains shortened alike: the range from the base clock still refuses it.
        let both = ChainClocks {
            add_mhz: 7_107.4,
            imul_mhz: 7_000.0,
        };
        let clock = CpuClock::decide(&xeon_vm(), Some(both));
        assert_eq!(clock.mhz, Some(2100.0));
        assert!(
            clock.mhz_source.contains("outside 1.050 GHz–6.300 GHz"),
            "{}",
            clock.mhz_source
        );
        // Far too slow (a preempted measurement) is refused too.
        let slow = ChainClocks {
            add_mhz: 900.0,
            imul_mhz: 910.0,
        };
        assert_eq!(CpuClock::decide(&xeon_vm(), Some(slow)).mhz, Some(2100.0));
    }

    #[test]
    fn a_boost_clock_both_chains_agree_on_is_used() {
        let boost = ChainClocks {
            add_mhz: 4277.0,
            imul_mhz: 4262.0,
        };
        assert!(boost.agree());
        let clock = CpuClock::decide(&zen5_vm(), Some(boost));
        assert_eq!(clock.mhz, Some(4277.0));
        let text = &clock.mhz_source;
        assert!(
            text.starts_with("measured: a chain of dependent register adds"),
            "{text}"
        );
        assert!(
            text.contains("the base clock 2.596 GHz of the TSC's rate"),
            "{text}"
        );
        assert!(text.contains("cpu MHz 2.596 GHz, TSC 2.596 GHz"), "{text}");
        // Nothing to check against: the measurement stands, and says so.
        let clock = CpuClock::decide(&ClockSources::default(), Some(boost));
        assert_eq!(clock.mhz, Some(4277.0));
        assert!(clock.mhz_source.contains("nothing to check it against"));
        // No measurement (off x86-64): the base clock.
        assert_eq!(CpuClock::decide(&zen5_vm(), None).mhz, Some(2596.1));
        assert_eq!(CpuClock::decide(&ClockSources::default(), None).mhz, None);
    }

    #[test]
    fn cpufreq_widens_the_range_and_is_the_fallback() {
        // A laptop part: 1.3 GHz base, 4.4 GHz boost, cpufreq on bare metal.
        let laptop = ClockSources {
            model_name_mhz: None,
            cpuinfo_mhz: Some(1300.0),
            cpufreq_max_mhz: Some(4400.0),
            cpufreq_min_mhz: Some(400.0),
            ..ClockSources::default()
        };
        let range = laptop.plausible().unwrap();
        assert!((range.low_mhz - 360.0).abs() < 1e-9, "{range:?}");
        assert!((range.high_mhz - 4840.0).abs() < 1e-9, "{range:?}");
        let boost = ChainClocks {
            add_mhz: 4300.0,
            imul_mhz: 4290.0,
        };
        assert_eq!(CpuClock::decide(&laptop, Some(boost)).mhz, Some(4300.0));
        let folded = ChainClocks {
            add_mhz: 5000.0,
            imul_mhz: 4900.0,
        };
        let clock = CpuClock::decide(&laptop, Some(folded));
        assert_eq!(clock.mhz, Some(4400.0));
        assert!(clock.mhz_source.starts_with("cpufreq's cpuinfo_max_freq"));
    }

    #[test]
    fn disagreeing_figures_are_named_with_the_one_used() {
        let odd = ClockSources {
            cpuinfo_mhz: Some(2900.0),
            ..xeon_vm()
        };
        let clock = CpuClock::from_sources(&odd);
        assert_eq!(clock.mhz, Some(2100.0));
        assert!(
            clock.mhz_source.contains(
                "the figures disagree (model name 2.100 GHz, cpu MHz 2.900 GHz, TSC 2.100 GHz)"
            ),
            "{}",
            clock.mhz_source
        );
        assert!(!CpuClock::from_sources(&xeon_vm())
            .mhz_source
            .contains("disagree"));
    }

    /// On the machine the tests run on: both chains give one clock, and it lies in the range
    /// this machine's `/proc/cpuinfo`, TSC and cpufreq allow, so it is the clock the profile
    /// uses. The immediate-add chain this replaced failed here on Golden Cove Xeons (10.1 GHz
    /// against a 2.1 GHz base, the imul chain not shortened).
    #[test]
    fn the_measured_clock_is_a_plausible_cpu_clock() {
        let cpu = CpuInfo::detect();
        let sources = ClockSources::read(&cpu);
        // Up to three tries: a test running beside this one on the other core (or on this
        // core's SMT sibling) can slow one chain; a CPU that shortens a chain does so every time.
        let mut chains = None;
        for _ in 0..3 {
            chains = measure_chains();
            if chains.is_none_or(|c| c.agree()) {
                break;
            }
        }
        let Some(chains) = chains else {
            // Off x86-64: the clock is the system's own.
            assert_eq!(
                CpuClock::detect(&cpu).mhz,
                CpuClock::from_sources(&sources).mhz
            );
            return;
        };
        let range = sources
            .plausible()
            .expect("an x86-64 Linux has cpu MHz in /proc/cpuinfo");
        assert!(
            chains.agree(),
            "{chains:?}: the chains disagree ({})",
            sources.describe()
        );
        assert!(
            range.contains(chains.add_mhz),
            "{chains:?} outside {range:?} ({})",
            sources.describe()
        );
        let clock = CpuClock::decide(&sources, Some(chains));
        assert_eq!(clock.mhz, Some(chains.add_mhz), "{}", clock.mhz_source);
        if cpu.constant_tsc {
            let tsc = sources.tsc_mhz.expect("the TSC's rate");
            assert!(range.contains(tsc), "TSC {tsc} MHz outside {range:?}");
        }
    }
}

//! Capture: one profiled forward pass of a model (TorchScript, an ExportedProgram, or a zoo
//! model, optionally compiled with torch.compile), through `scripts/capture_trace.py` run with
//! the project's Python.

use crate::model::python::run_script_lines;

use super::observer::Observer;
use super::options::CaptureOptions;

/// Writes the trace of `options.model` to `options.out`; the script's own report (which step
/// it kept, where the trace went, what a compiled run recorded) reaches `observer` as a result.
pub fn run(options: &CaptureOptions, observer: &mut dyn Observer) -> crate::Result<()> {
    // A file that is no model at all is refused before Python spends seconds importing torch
    // (an ExportedProgram is a zip too, but the script names what is wrong with one better).
    if options.zoo.is_none() && options.model.extension().is_none_or(|e| e != "pt2") {
        crate::model::torchscript::check_archive(&options.model)?;
    }
    run_script_lines("capture_trace.py", &script_args(options), &mut |line| {
        observer.result(line)
    })?;
    Ok(())
}

/// The script's command line.
fn script_args(options: &CaptureOptions) -> Vec<String> {
    let mut argv = match &options.zoo {
        Some(name) => vec!["--zoo".to_string(), name.clone()],
        None => vec!["--model".to_string(), options.model.display().to_string()],
    };
    argv.extend([
        "--seq-len".into(),
        options.seq_len.to_string(),
        "--batch".into(),
        options.batch.to_string(),
        "--device".into(),
        options.device.to_string(),
        "--warmup".into(),
        options.warmup.to_string(),
        "--candidates".into(),
        options.candidates.to_string(),
        "--out".into(),
        options.out.display().to_string(),
    ]);
    if let Some(t) = options.threads {
        argv.extend(["--threads".into(), t.to_string()]);
    }
    for spec in &options.inputs {
        argv.extend(["--input".into(), spec.to_string()]);
    }
    if options.execution_trace {
        argv.push("--execution-trace".into());
    }
    if options.fuse_on_cpu {
        argv.push("--fuse-on-cpu".into());
    }
    if let Some(mode) = options.compile {
        argv.extend(["--compile".into(), mode.to_string()]);
        if options.time_runs > 0 {
            argv.extend([
                "--time-runs".into(),
                options.time_runs.to_string(),
                "--time-warmup".into(),
                options.time_warmup.to_string(),
            ]);
            if options.time_only {
                argv.push("--time-only".into());
            }
        }
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_gets_every_option_and_the_defaults_it_was_not_told() {
        let argv = script_args(&CaptureOptions {
            model: "m.pt".into(),
            out: "t.json".into(),
            threads: Some(2),
            ..CaptureOptions::default()
        });
        assert_eq!(
            argv.join(" "),
            "--model m.pt --seq-len 5 --batch 1 --device cpu --warmup 3 --candidates 5 \
             --out t.json --threads 2"
        );
    }

    #[test]
    fn a_compiled_zoo_capture_names_the_zoo_model_and_the_mode() {
        use crate::pipeline::CompileMode;
        let argv = script_args(&CaptureOptions {
            zoo: Some("bloom-tiny".into()),
            compile: Some(CompileMode::ReduceOverhead),
            out: "r/t.json".into(),
            ..CaptureOptions::default()
        });
        assert_eq!(
            argv.join(" "),
            "--zoo bloom-tiny --seq-len 5 --batch 1 --device cpu --warmup 3 --candidates 5 \
             --out r/t.json --compile reduce-overhead"
        );
        let argv = script_args(&CaptureOptions {
            model: "m.pt2".into(),
            compile: Some(CompileMode::Default),
            out: "t.json".into(),
            ..CaptureOptions::default()
        });
        assert!(argv.join(" ").starts_with("--model m.pt2 "), "{argv:?}");
        assert!(argv.join(" ").ends_with("--compile default"), "{argv:?}");
        let argv = script_args(&CaptureOptions {
            zoo: Some("bloom-tiny".into()),
            compile: Some(CompileMode::Default),
            time_runs: 20,
            time_warmup: 4,
            out: "t.json".into(),
            ..CaptureOptions::default()
        });
        assert!(
            argv.join(" ")
                .ends_with("--compile default --time-runs 20 --time-warmup 4"),
            "{argv:?}"
        );
        let argv = script_args(&CaptureOptions {
            zoo: Some("bloom-tiny".into()),
            compile: Some(CompileMode::Default),
            time_runs: 20,
            time_only: true,
            out: "t.json".into(),
            ..CaptureOptions::default()
        });
        assert!(argv.join(" ").ends_with(" --time-only"), "{argv:?}");
    }

    #[test]
    fn an_execution_trace_is_asked_for_by_its_flag() {
        let argv = script_args(&CaptureOptions {
            zoo: Some("bloom-tiny".into()),
            out: "t.json".into(),
            execution_trace: true,
            ..CaptureOptions::default()
        });
        assert!(
            argv.join(" ").ends_with("--out t.json --execution-trace"),
            "{argv:?}"
        );
    }

    #[test]
    fn the_cpu_fuser_is_asked_for_by_its_flag_and_passed_on_by_compare() {
        let argv = script_args(&CaptureOptions {
            model: "m.pt".into(),
            out: "t.json".into(),
            fuse_on_cpu: true,
            ..CaptureOptions::default()
        });
        assert!(argv.join(" ").ends_with(" --fuse-on-cpu"), "{argv:?}");
        let compare = crate::pipeline::CompareOptions {
            run: crate::pipeline::FullOptions {
                fuse_on_cpu: true,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(compare.capture("t.json".into()).fuse_on_cpu);
        assert!(
            !crate::pipeline::CompareOptions::default()
                .capture("t.json".into())
                .fuse_on_cpu
        );
    }
}

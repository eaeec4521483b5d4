"""TorchScript's fusion groups in a captured trace (for `replay capture`, capture_trace.py).

TorchScript's profiling executor fuses element-wise chains of a model into groups
(`prim::TensorExprGroup`, NNC's kernels; `prim::FusionGroup`, the legacy fuser's;
`prim::CudaFusionGroup`, nvFuser's). Each group runs as one op the profiler records by the
kernel's name (`fused_batch_norm_add`, `fused_mul_mul_mul_mu_5065363705190979294`) with no
inputs, so the trace alone cannot say what it ran on. The model is at hand during a capture:
after the profiled steps the optimised graph TorchScript last ran
(`torch.jit.last_executed_optimized_graph()`) holds every group with its subgraph and the
complete types of its inputs (the types its guard checked). `annotate` writes them into the
trace: each group's event gets the `Input Dims`/`Input type`/`Input Strides` of its subgraph's
inputs and a `Fusion group` index, and the trace a `replayFusionGroups` section with each
group's subgraph (IR text) and the fuser settings it ran under, which `replay isolated` builds
the group's kernel from.

Groups are matched to the trace's events by name, in execution order: the n-th event named N is
the n-th group named N in the graph's node order (a group inside a loop body is matched again
on each turn). An event no group answers to keeps no inputs and is counted in the section.

Torch-free to import; torch is only used through the graph objects handed in.
"""

FUSION_KINDS = ("prim::TensorExprGroup", "prim::FusionGroup", "prim::CudaFusionGroup")
# The name TorchScript gives a group's kernel: SubgraphUtils::generateNameForGraph's defaults.
NAME_PREFIX = "fused"
NAME_MAX_LEN = 40

# The profiler's `Input type` names of dtypes (c10's TypeMeta names), as traces record them.
PROFILER_DTYPE_NAMES = {
    "Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
    "Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char",
    "Byte": "unsigned char", "Bool": "bool",
}

_U64 = (1 << 64) - 1


def _libstdcxx_hash(text):
    """std::hash<std::string> of libstdc++ (64-bit `_Hash_bytes`, seed 0xc70f6907): what
    c10::hash gives the truncated kernel names."""
    data = text.encode()
    mul = (0xC6A4A793 << 32) + 0x5BD1E995

    def shift_mix(v):
        return v ^ (v >> 47)

    h = (0xC70F6907 ^ (len(data) * mul)) & _U64
    aligned = len(data) & ~7
    for i in range(0, aligned, 8):
        word = (shift_mix((int.from_bytes(data[i:i + 8], "little") * mul) & _U64) * mul) & _U64
        h = ((h ^ word) * mul) & _U64
    if len(data) & 7:
        h = ((h ^ int.from_bytes(data[aligned:], "little")) * mul) & _U64
    h = (shift_mix(h) * mul) & _U64
    return shift_mix(h)


def kernel_name(op_kinds, maxlen=NAME_MAX_LEN, prefix=NAME_PREFIX):
    """The name TorchScript's NNC gives a group whose aten ops are `op_kinds` (unqualified,
    in node order): `fused_add_relu`, or past `maxlen` characters the first part and the hash
    of the whole name (`truncateStrWithHash`)."""
    name = prefix + "".join("_" + k for k in op_kinds)
    if len(name) <= maxlen:
        return name
    digest = str(_libstdcxx_hash(name))
    return name[: maxlen - len(digest) - 1] + "_" + digest


def fuser_settings(torch):
    """The fuser switches of this process, as the replay sets them again."""
    c = torch._C
    return {
        "texpr_fuser_enabled": bool(c._jit_texpr_fuser_enabled()),
        "can_fuse_on_cpu": bool(c._jit_can_fuse_on_cpu()),
        "can_fuse_on_gpu": bool(c._jit_can_fuse_on_gpu()),
        "te_must_use_llvm_cpu": bool(c._jit_get_te_must_use_llvm_cpu()),
        "llvm_enabled": bool(c._llvm_enabled()),
        "num_threads": torch.get_num_threads(),
    }


def switch_on_cpu_fuser(torch):
    """TorchScript's fuser on the CPU (off by default): NNC's texpr fuser, allowed on the CPU,
    with its IR interpreter where this torch has no LLVM (the pip wheels)."""
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_texpr_fuser_enabled(True)
    if not torch._C._llvm_enabled():
        torch._C._jit_set_te_must_use_llvm_cpu(False)


# The dtypes TorchScript's fuser leaves unfused on the CPU: `typesAreSupported` in
# torch/csrc/jit/passes/tensorexpr_fuser.cpp refuses an op that takes a CPU tensor of float16,
# and of bfloat16 unless torch was built with LLVM (the pip wheels are not). A GPU fuses both.
CPU_UNFUSED = {"Half": "float16", "BFloat16": "bfloat16"}


def cpu_unfused_dtypes(torch, tensors):
    """The dtypes of `tensors` (a model's parameters, buffers and inputs) whose ops TorchScript's
    fuser does not fuse on this process's CPU, by torch's name (`bfloat16`), sorted."""
    llvm = bool(torch._C._llvm_enabled())
    found = set()
    for t in tensors:
        if t.device.type != "cpu":
            continue
        if t.dtype == torch.float16 or (t.dtype == torch.bfloat16 and not llvm):
            found.add(str(t.dtype).removeprefix("torch."))
    return sorted(found)


def model_cpu_unfused(torch, module, inputs):
    """`cpu_unfused_dtypes` of a model's parameters, buffers and inputs."""
    tensors = [*getattr(module, "parameters", list)(), *getattr(module, "buffers", list)(), *inputs]
    return cpu_unfused_dtypes(torch, tensors)


def cpu_unfused_note(dtypes):
    """What the capture says of `cpu_unfused_dtypes`: the groups a GPU would form that this
    trace lacks. None when there are none."""
    if not dtypes:
        return None
    why = {"bfloat16": "bfloat16 (fused only where torch has LLVM; this one has not)"}
    return (f"TorchScript's fuser does not fuse ops on {' or '.join(why.get(d, d) for d in dtypes)} "
            "CPU tensors (tensorexpr_fuser.cpp): this model's element-wise chains in "
            f"{' and '.join(dtypes)}, which a GPU runs as fusion groups, run here as aten ops")


def _input_record(value):
    """One subgraph input: its tensor type (dtype, sizes, strides, device) or why not."""
    t = value.type()
    if t.kind() != "TensorType":
        return {"type": str(t)}
    sizes, strides, dtype = t.sizes(), t.strides(), t.scalarType()
    if sizes is None or strides is None or dtype is None:
        return {"type": "Tensor", "incomplete": str(t)}
    return {"dtype": dtype, "profiler_type": PROFILER_DTYPE_NAMES.get(dtype),
            "sizes": list(sizes), "strides": list(strides),
            "device": str(t.device()) if t.device() is not None else None}


def groups_in(graph):
    """Every fusion group of `graph` (and of its blocks), in node order."""
    found = []

    def walk(block):
        for node in block.nodes():
            if node.kind() in FUSION_KINDS:
                sub = node.g("Subgraph")
                ops = [n.kind().split("::", 1)[1] for n in sub.nodes() if n.kind().startswith("aten::")]
                found.append({
                    "kind": node.kind(),
                    "name": kernel_name(ops),
                    "ops": ops,
                    # A dynamic-shape group also takes its symbolic sizes and strides.
                    "dynamic_shapes": "striding_inputs_desc" in node.attributeNames(),
                    "inputs": [_input_record(v) for v in sub.inputs()],
                    "graph": str(sub),
                })
            for inner in node.blocks():
                walk(inner)

    walk(graph)
    return found


def _profiler_args(group):
    """The `Input Dims`/`Input type`/`Input Strides`/`Concrete Inputs` the profiler would
    have recorded for the group's inputs, or None when one is not a complete tensor type."""
    dims, types, strides = [], [], []
    for record in group["inputs"]:
        if record.get("profiler_type") is None:
            return None
        dims.append(record["sizes"])
        types.append(record["profiler_type"])
        strides.append(record["strides"])
    return {"Input Dims": dims, "Input type": types, "Input Strides": strides,
            "Concrete Inputs": [""] * len(dims)}


def annotate(trace, graph, settings, how):
    """Writes the fusion groups of `graph` (the optimised graph the traced steps ran) into
    `trace` (a Chrome trace, in place) and returns the section written as
    `replayFusionGroups`, or None when the trace has no fused op and the graph no group."""
    groups = groups_in(graph) if graph is not None else []
    events = sorted((e for e in trace.get("traceEvents", [])
                     if e.get("ph") == "X" and e.get("cat") == "cpu_op"
                     and str(e.get("name", "")).startswith(NAME_PREFIX + "_")),
                    key=lambda e: e.get("ts", 0))
    if not groups and not events:
        return None
    by_name = {}
    for index, group in enumerate(groups):
        by_name.setdefault(group["name"], []).append(index)
    turns = {}
    annotated, unmatched = 0, {}
    for event in events:
        name = event["name"]
        candidates = by_name.get(name)
        if not candidates:
            unmatched[name] = unmatched.get(name, 0) + 1
            continue
        turn = turns.get(name, 0)
        turns[name] = turn + 1
        index = candidates[turn % len(candidates)]
        args = event.setdefault("args", {})
        recorded = _profiler_args(groups[index])
        if recorded is not None and "Input Dims" not in args:
            args.update(recorded)
        args["Fusion group"] = index
        annotated += 1
    return {"how": how, "fuser": settings, "groups": groups, "events": len(events),
            "annotated": annotated, "unmatched": unmatched}

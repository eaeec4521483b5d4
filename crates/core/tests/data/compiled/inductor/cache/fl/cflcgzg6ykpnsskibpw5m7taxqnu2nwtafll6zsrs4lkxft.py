# Hand-written for the kernels.json reader's tests: a stand-in for the module Inductor
# writes to its cache (the real one holds the generated `call()` and each kernel's C++
# source; see make_traces.py). Nothing runs it.
cpp_fused_gelu_0 = "kernel"
cpp_fused_add_native_layer_norm_1 = "kernel"
cpp_fused_add_native_layer_norm_2 = "kernel"

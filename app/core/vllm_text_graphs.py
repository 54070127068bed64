"""vLLM's CUDA-graph and compilation refusals, as templates the start-up log rules read (issue 22 item 10).

Kept apart from vllm_text.py (at the 800-line cap); app/core/logs/startup/rules.py looks a rule's template up in
both modules. Each is vLLM's own text, read from the wheels (the pattern also takes the 0.10.x wording):

- config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes (0.20.0-0.33.0; 0.10.2-0.19.0
  gpu_model_runner._check_and_update_cudagraph_mode): a full graph asked of a backend with NEVER support raises
  "CUDAGraphMode.FULL is not supported with <backend> backend (support: AttentionCGSupport.NEVER); please try
  cudagraph_mode=PIECEWISE, and make sure compilation mode is VLLM_COMPILE" (0.10.x: "... compilation level is
  piecewise", vllm#23200), and after the downgrades "... is not supported with <backend> backend
  (support:<level>) ; please try cudagraph_mode=PIECEWISE";
- config/vllm.py VllmConfig._set_cudagraph_sizes (0.13.0-0.33.0): "customized max_cudagraph_capture_size(=X)
  should be consistent with the max value of cudagraph_capture_sizes(=Y)";
- engine/arg_utils.py parse_dataclass (0.13.0-0.33.0): a --compilation-config key CompilationConfig lacks is
  pydantic's "validation error for CompilationConfig ... Extra inputs are not permitted".
"""

from __future__ import annotations

from app.core.vllm_text import VllmLine

GRAPH_MODE_REFUSED = VllmLine(
    "please try cudagraph_mode=PIECEWISE",
    r"CUDAGraphMode\.([A-Z_]{1,24}) is not supported with ([\w.]{1,80}) backend \(support: ?AttentionCGSupport\."
    r"([A-Z_]{1,40})\) ?; please try cudagraph_mode=PIECEWISE",
    "CUDAGraphMode.{mode} is not supported with {backend} backend (support: {support}); please try "
    "cudagraph_mode=PIECEWISE, and make sure compilation mode is VLLM_COMPILE",
    "config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes (0.20.0 ... 0.33.0); "
    "v1/worker/gpu_model_runner.py::_check_and_update_cudagraph_mode (0.10.2 ... 0.19.0)",
)
CAPTURE_SIZES_INCONSISTENT = VllmLine(
    "should be consistent with the max value of cudagraph_capture_sizes",
    r"customized max_cudagraph_capture_size ?\(=(\d{1,9})\) should be consistent with the max value of "
    r"cudagraph_capture_sizes ?\(=(\d{1,9})\)",
    "customized max_cudagraph_capture_size(={given}) should be consistent with the max value of "
    "cudagraph_capture_sizes(={valid})",
    "config/vllm.py::VllmConfig._set_cudagraph_sizes (0.13.0 ... 0.33.0)",
)
COMPILATION_CONFIG_INVALID = VllmLine(
    "for CompilationConfig",
    r"\d{1,3} validation errors? for CompilationConfig",
    "1 validation error for CompilationConfig",
    "engine/arg_utils.py::parse_dataclass, TypeAdapter(CompilationConfig).validate_json (0.13.0 ... 0.33.0)",
)

# CUDA's (and HIP's) error for an operation a capturing stream does not allow ("cudaErrorStreamCaptureUnsupported",
# "operation not permitted when stream is capturing", club-3090#106): raised only while a stream captures, so the
# start-up was in graph capture
STREAM_CAPTURE_ERROR = VllmLine(
    "aptur",
    r"\b(?:cuda|hip)ErrorStreamCapture\w{1,40}|\boperation not permitted when stream is capturing\b",
)

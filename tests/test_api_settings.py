"""Settings: config file < VERIRAG_* env vars < CLI flags, secrets masked, clear errors; `verirag serve` CLI."""
from __future__ import annotations

from pathlib import Path

import pytest

from api.cli import main
from api.settings import SettingsError, load_settings


def test_precedence_file_env_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "verirag.toml"
    cfg.write_text('port = 9001\nhost = "0.0.0.0"\nmax_pending = 7\ncors_origins = ["https://a.example"]\n'
                   'api_key = "file-secret-123"\n', encoding="utf-8")
    monkeypatch.setenv("VERIRAG_PORT", "9002")
    monkeypatch.setenv("VERIRAG_MAX_PENDING", "9")
    s = load_settings(cfg, port=9003)
    assert (s.port, s.max_pending, s.host, s.cors_origins) == (9003, 9, "0.0.0.0", ["https://a.example"])
    assert s.api_key.get_secret_value() == "file-secret-123"
    assert "file-secret-123" not in s.describe() and "api_key = ********" in s.describe()
    assert load_settings(cfg).port == 9002  # env beats the file


@pytest.mark.parametrize("text,suffix,needle", [
    ("bogus_key = 1\n", ".toml", "bogus_key"),
    ("port = 'eighty'\n", ".toml", "port"),
    ("port = 70000\n", ".toml", "port"),
    ("api_key = 'short'\n", ".toml", "at least 8"),
    ("port = [\n", ".toml", "cannot parse"),
    ("- a\n- b\n", ".yaml", "mapping"),
    ("{}", ".ini", "must be .toml"),
])
def test_bad_config_is_a_clear_error(tmp_path: Path, text: str, suffix: str, needle: str) -> None:
    cfg = tmp_path / f"c{suffix}"
    cfg.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError, match=needle):
        load_settings(cfg)


def test_yaml_and_json_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("verirag:\n  port: 8123\n", encoding="utf-8")
    (tmp_path / "c.json").write_text('{"max_tokens_limit": 64}', encoding="utf-8")
    assert load_settings(tmp_path / "c.yaml").port == 8123
    assert load_settings(tmp_path / "c.json").max_tokens_limit == 64
    with pytest.raises(SettingsError, match="not found"):
        load_settings(tmp_path / "nope.toml")


def test_serve_cli_prints_masked_settings_and_refuses_bad_input(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("VERIRAG_ADMIN_API_KEY", "admin-secret-999")
    kb = tmp_path / "kb"
    kb.mkdir()
    assert main(["serve", "--kb", str(kb), "--port", "8555", "--print-settings"]) == 0
    err = capsys.readouterr().err
    assert "port = 8555" in err and f"kb_dir = {kb}" in err and "admin_api_key = ********" in err
    assert "admin-secret-999" not in err
    bad = tmp_path / "bad.toml"
    bad.write_text("colour = 'blue'\n", encoding="utf-8")
    assert main(["serve", "--config", str(bad)]) == 2
    assert "colour" in capsys.readouterr().err
    assert main(["serve", "--kb", str(tmp_path / "missing")]) == 2
    assert "knowledge base folder not found" in capsys.readouterr().err


def test_speculative_tokens_setting_builds_a_speculating_engine(tmp_path: Path, monkeypatch) -> None:
    from api.state import build_components
    from engine_tiny_models import make_tiny_model

    model = make_tiny_model(tmp_path / "tiny")
    monkeypatch.setenv("VERIRAG_SPECULATIVE_TOKENS", "3")
    settings = load_settings(None, model=str(model), kv_cache_bytes=8 * 1024 * 1024)
    engine = build_components(settings)["engine"]
    assert engine.speculator is not None and engine.speculator.cfg.num_speculative_tokens == 3
    assert engine.speculator.cfg.method == "ngram"
    off = build_components(load_settings(None, model=str(model), kv_cache_bytes=8 * 1024 * 1024,
                                         speculative_tokens=0))["engine"]
    assert off.speculator is None


@pytest.mark.parametrize("value", ["-1", "17", "two"])
def test_bad_speculative_tokens_is_a_clear_error(value: str, monkeypatch) -> None:
    monkeypatch.setenv("VERIRAG_SPECULATIVE_TOKENS", value)
    with pytest.raises(SettingsError, match="speculative_tokens"):
        load_settings(None)
    monkeypatch.delenv("VERIRAG_SPECULATIVE_TOKENS")
    assert main(["serve", "--speculative-tokens", "-2", "--print-settings"]) == 2
    assert main(["serve", "--speculative-tokens", "4", "--print-settings"]) == 0

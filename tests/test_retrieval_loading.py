"""Retrieval: KB loading (front matter, HTML, bad files, symlinks, traversal), tokenization, chunking."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from retrieval.chunking import ChunkingConfig, chunk_text
from retrieval.documents import LoadLimits, load_document, normalize_doc_id, scan_kb
from retrieval.errors import DocumentError, PathRefusedError
from retrieval.tokenize import tokenize

KB = Path(__file__).parent / "fixtures" / "kb_small"


def test_front_matter_metadata_and_spans_point_at_file_lines():
    doc = load_document(KB, "policies/annual_leave.md")
    m = doc.meta
    assert (m.title, m.effective_date, m.supersedes, m.language, m.tags) == (
        "Annual Leave Policy", "2024-01-01", "policies/annual_leave_2022.md", "en", ["hr", "leave"])
    assert doc.text == (KB / "policies/annual_leave.md").read_text(encoding="utf-8")
    assert doc.text[m.body_start:].startswith("# Annual Leave Policy")
    lines = doc.text.split("\n")
    chunks = chunk_text(m.doc_id, doc.text, m.body_start, ChunkingConfig(max_chars=300, overlap_chars=60, min_chars=100))
    assert len(chunks) >= 3
    for c in chunks:
        assert doc.text[c.start:c.end] == c.text and c.start >= m.body_start
        # the cited lines of the source file contain the chunk, first and last line included
        cited = "\n".join(lines[c.start_line - 1:c.end_line])
        assert c.text in cited and cited.startswith(lines[c.start_line - 1]) and c.text.startswith(lines[c.start_line - 1].strip()[:10])
    assert any("25 days" in c.text and c.heading_path == ["Annual Leave Policy", "Entitlement"] for c in chunks)
    assert not any("title:" in c.text for c in chunks)  # front matter is not content


def test_crlf_text_file_and_guessed_language():
    doc = load_document(KB, "it/vpn_setup.txt")
    assert "\r" not in doc.text and doc.meta.language == "en" and doc.meta.title is None
    assert load_document(KB, "zh/baoxiao.md").meta.language == "zh"


def test_html_drops_scripts_and_styles_and_keeps_headings():
    doc = load_document(KB, "finance/expenses.html")
    assert doc.meta.title == "Travel and Expenses Policy" and doc.meta.language == "en"
    assert "zebracorn" not in doc.text and "font-family" not in doc.text and "<" not in doc.text
    assert "The hotel limit is 150 EUR per night in most cities" in doc.text
    chunks = chunk_text(doc.meta.doc_id, doc.text)
    assert any(c.heading_path == ["Travel and Expenses Policy", "Hotels"] and "150 EUR" in c.text for c in chunks)


def test_bad_files_are_refused_with_reasons():
    with pytest.raises(DocumentError, match="binary"):
        load_document(KB, "bad/blob.txt")
    with pytest.raises(DocumentError, match=r"not valid UTF-8 \(byte 64"):
        load_document(KB, "bad/latin1.md")
    with pytest.raises(DocumentError, match="exceeds the limit of 100 bytes"):
        load_document(KB, "policies/annual_leave.md", LoadLimits(max_file_bytes=100))
    with pytest.raises(DocumentError, match="unsupported file type"):
        load_document(KB, "README.rst")


def test_bad_front_matter(tmp_path):
    (tmp_path / "a.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("---\ntags: {a: 1}\n---\nbody\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("---\nsupersedes: ../../etc/passwd\n---\nbody\n", encoding="utf-8")
    with pytest.raises(DocumentError, match="a.md: invalid YAML front matter"):
        load_document(tmp_path, "a.md")
    with pytest.raises(DocumentError, match="'tags' must be a list"):
        load_document(tmp_path, "b.md")
    with pytest.raises(PathRefusedError, match="relative path inside"):
        load_document(tmp_path, "c.md")
    # a well-formed date that is no date: refused with the reason, the rest of the KB indexed (it crashed the ingest)
    (tmp_path / "d.md").write_text("---\neffective_date: 2025-13-40\n---\nbody\n", encoding="utf-8")
    with pytest.raises(DocumentError, match="d.md: invalid YAML front matter: month must be in 1..12"):
        load_document(tmp_path, "d.md")
    from retrieval import ingest

    report = ingest(tmp_path, tmp_path.parent / f"{tmp_path.name}-index", embedder="hashing")
    assert dict(report.skipped)["d.md"].startswith("invalid YAML front matter: month") and report.num_documents == 0


def test_symlinks_and_traversal_refused(tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(KB / "policies", kb / "policies")
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\nThe launch code is 1234.\n", encoding="utf-8")
    os.symlink(outside, kb / "link.md")
    os.symlink(tmp_path, kb / "linkdir")
    os.symlink(kb / "policies" / "remote_work.md", kb / "policies" / "inner_link.md")
    names, refused = scan_kb(kb)
    assert names == ["policies/annual_leave.md", "policies/annual_leave_2022.md", "policies/remote_work.md"]
    assert {p for p, _ in refused} == {"link.md", "linkdir", "policies/inner_link.md"}
    assert all("symlink" in reason for _, reason in refused)
    with pytest.raises(PathRefusedError, match="symlink"):
        load_document(kb, "link.md")
    with pytest.raises(PathRefusedError, match="symlink"):
        load_document(kb, "linkdir/secret.md")
    with pytest.raises(PathRefusedError, match=r"without '\.\.'"):
        load_document(kb, "../secret.md")
    with pytest.raises(PathRefusedError):
        load_document(kb, str(outside))
    assert normalize_doc_id("./policies\\a.md") == "policies/a.md"


def test_tokenize_english_and_chinese():
    assert tokenize("The Full-time staff get 25.5 days; it's the company’s rule") == [
        "full", "time", "staff", "get", "25.5", "days", "company", "rule"]  # "it's" -> "it", a stop word
    assert tokenize("全职员工年假。iPhone手机") == ["全职", "职员", "员工", "工年", "年假", "iphone", "手机"]
    assert tokenize("假") == ["假"] and tokenize("！？。 ") == []


def test_chinese_chunks_end_at_sentence_ends_and_cover_the_text():
    sents = [f"第{i}条规定员工每年享有{i}天假期，须提前申请。" if i % 3 else f"这是第{i}个问题吗？" for i in range(60)]
    text = "# 制度\n\n" + "".join(sents) + "\n"
    cfg = ChunkingConfig(max_chars=120, overlap_chars=30, min_chars=40)
    chunks = chunk_text("zh.md", text, 0, cfg)
    assert len(chunks) > 5
    body = text.index("第0")
    for a, b in zip(chunks, chunks[1:]):
        assert b.start <= a.end, "consecutive chunks leave a gap"
        assert a.end - b.start <= cfg.overlap_chars, "overlap larger than configured"
    for c in chunks:
        assert text[c.start:c.end] == c.text and len(c.text) <= cfg.max_chars
        assert c.text[-1] in "。？", f"chunk does not end at a sentence end: {c.text[-10:]!r}"
        assert c.start == body or text[c.start - 1] in "。？\n", "chunk starts mid-sentence"
    assert chunks[0].start <= body and chunks[-1].end == len(text) - 1


def test_overlong_sentence_is_hard_split_without_losing_text():
    text = "甲" * 1000 + "。 " + "word " * 300
    chunks = chunk_text("x.txt", text, 0, ChunkingConfig(max_chars=100, overlap_chars=0, min_chars=0), headings=False)
    assert all(len(c.text) <= 100 for c in chunks)
    covered = "".join(c.text for c in chunks)
    assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", text)


def test_chunking_config_validation():
    with pytest.raises(ValueError, match="overlap_chars"):
        ChunkingConfig(max_chars=100, overlap_chars=60)
    with pytest.raises(ValueError, match="max_chars"):
        ChunkingConfig(max_chars=10)


def test_code_fences_do_not_open_sections_and_cjk_file_names_work(tmp_path):
    (tmp_path / "制度").mkdir()
    text = "# 安装\n\n运行脚本。\n\n```bash\n# not a heading\necho hi\n```\n\n## 配置\n\n设置端口。\n"
    (tmp_path / "制度" / "安装说明.md").write_text(text, encoding="utf-8")
    assert scan_kb(tmp_path)[0] == ["制度/安装说明.md"]
    doc = load_document(tmp_path, "制度/安装说明.md")
    chunks = chunk_text(doc.meta.doc_id, doc.text)
    assert [c.heading_path for c in chunks] == [["安装"], ["安装", "配置"]]
    assert "# not a heading" in chunks[0].text and chunks[0].chunk_id == "制度/安装说明.md#0"


def test_an_html_pages_meta_tags_are_its_front_matter(tmp_path):
    # blind/04's and blind/07's authors put authority and effective_date in <meta> tags, which were never read
    (tmp_path / "a.html").write_text(
        '<html lang="en"><head><title>Admission</title><meta charset="utf-8">'
        '<meta name="authority" content="Note"><meta name="effective-date" content="2026-09-01">'
        '<meta name="subject" content="Great Hall"><meta name="superseded_by" content="b.md">'
        '<meta name="description" content="ignored"></head><body><p>Adults pay GBP 16.</p></body></html>',
        encoding="utf-8")
    meta = load_document(tmp_path, "a.html").meta
    assert (meta.authority, meta.effective_date, meta.subject, meta.declared_superseded_by, meta.title) == \
        ("note", "2026-09-01", "Great Hall", "b.md", "Admission")
    (tmp_path / "plain.html").write_text("<html><body><p>No meta.</p></body></html>", encoding="utf-8")
    plain = load_document(tmp_path, "plain.html").meta
    assert (plain.authority, plain.effective_date, plain.subject) == (None, None, None)

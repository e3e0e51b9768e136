"""The ground floor: sentences, spans, citations, values, terms, tables and entity names in a text; imports nothing from the rest of pipeline."""

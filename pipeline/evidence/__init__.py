"""What a question is answered from: the retrieval rounds, the knowledge base's facts, links, leads and bridges."""

"""What the rules prove or disprove for a question: goals, limits, premises and computations over the evidence facts."""

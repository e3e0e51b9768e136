"""A question read into its focus: the answer type it expects, the entities it names, the relations it asks and the values it states."""

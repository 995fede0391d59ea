"""vlmrobust: diagnosing how vision-language models fail under image corruption."""
__version__ = "0.1.0"

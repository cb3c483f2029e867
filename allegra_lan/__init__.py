"""allegra-lan: ALLEGRA and ALLEGRA Grande between peers on one home network."""

__version__ = "0.1.0"

import harness


def test_public_names_are_exactly_all():
    public = {name for name in vars(harness) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(harness, name)).__name__ == "module"}
    assert set(harness.__all__) == (public - modules) | {"__version__"}

"""The platform: its model as the engine sees it (hosts, pstates, power, network routes, IRMaSim's
node hierarchy) and the readers of every platform format (SimGrid XML, joulesim JSON, IRMaSim's
JSON), with the format-independent checks.

Add a platform format here: a reader returning `platform_model.Platform`, chosen in
`platform_loader.py`. May import: joulesim.protocol, joulesim.inputs.
"""

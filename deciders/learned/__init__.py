"""The step structure of seed 002's learned Energy scheduler (one (job, node) pair at a time), its
observation, and the uniformly random valid policy on the same steps (`random-pairs`).

The decider that runs a trained model (`rl`) lives with the agent it loads, in
`joulesim.rl.trained_policy` (it needs torch: the rl extra). May import: deciders.node,
deciders.common, joulesim.protocol, joulesim.inputs, joulesim.console.
"""

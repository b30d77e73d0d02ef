"""Batch scheduling policies on Batsim's platforms: FCFS, SJF, EASY and conservative
backfilling (with the Batsim thesis's placement variants), queues ordered by a score or by
learned utility functions (WFP3, UNICEF, seed 003), and the rejecter.

Add a queue policy here: a `QueuePolicy` subclass, or an order from common.queue_order with a
pass (ordered_policy.py). May import: deciders.common, joulesim.protocol, joulesim.inputs.
"""

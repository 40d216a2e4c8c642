print("lockstep: under construction")

"""Where the model stages' work runs: worker processes on this machine, or Ray actors."""

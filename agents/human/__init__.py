"""`nertz play --human`: one seat for a person against agents, on a wall clock."""

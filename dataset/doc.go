// Package dataset writes yutenv's self-play training datasets
// (docs/DATASETS.md): a directory of .npz shards, each with the game records
// it came from, and a manifest.json that says how the dataset was made
// (rules, agents, tier and observation layout, seed) and lists every shard
// with its size and SHA-256.
//
// The schema is declared once: Arrays names every array, its numpy dtype
// and the shape of one row (one decision), GameArrays those whose rows are
// games, and Columns collects the rows in that order. Every file is written atomically (userfile.CreateAtomic: a temporary
// name, fsync, rename, fsync of the directory), shards before the manifest
// that lists them, so a killed run leaves a consistent dataset that Open
// resumes; the bytes of a shard depend only on its arrays (WriteNPZ stores
// no timestamps), so a resumed run writes what an uninterrupted one would.
//
// A dataset can also hold one range of games (Config.FirstGame, a multiple
// of ShardGames): the part one worker of a distributed run writes. Its
// shards are numbered as in a dataset of all games, so parts merged into one
// manifest (python/yutenv/integrations/distributed.py) are the dataset one run writes.
//
// Usage:
//
//	m, err := dataset.Open(dir, dataset.Config{Rules: rules, Agents: specs, Space: enc.Space(),
//		Seed: seed, SeedScheme: vecenv.SeedScheme, ShardGames: 100, Software: "yutenv 0.1.0"}, games)
//	if err != nil { ... }
//	cols := dataset.NewColumns(enc.Size())
//	... cols.AddDecision(enc, buf, &state, action, stats, game) for each decision
//	    (agent.Game.OnDecision), cols.EndGame(enc, &final) when a game ends
//	    (agent.Game.OnEnd) ...
//	err = m.AddShard(dir, m.Games, cols, records)
package dataset

// SPDX-License-Identifier: MIT
/*
 * smartio predict figure: the papers' figures from the timing model, next to
 * the numbers the papers state and (optionally) the emulated cluster's
 * measurements (docs/timing-model.md, "Figures"; bench/figures runs it all).
 *
 *   smartio predict figure [ID|all|list] [--json] [--measured FILE]
 *                          [--gnuplot DIR] [--params FILE]
 *
 * --measured FILE: lines "FIGURE-ID LABEL X VALUE" (# comments), the emulated
 * side: X is the transfer size in bytes (0 for a bar), VALUE is GB/s or ns as
 * the figure's unit. They are printed beside the model and plotted on their
 * own axis; they are wall-clock figures of an emulation running at memory
 * speed, so there is no drift check on them. Exit 1 if a stated number the
 * figure carries is more than 10% off the model.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "smartio/timing.h"

#define EMU_SERIES 8
#define EMU_POINTS 24
#define EMU_LABEL  48
#define EMU_NOTE "emulated: wall clock of the emulated cluster (memory speed, not PCIe); " \
		 "no drift check"

struct emu {
	unsigned n;
	struct {
		char label[EMU_LABEL];
		unsigned n;
		double x[EMU_POINTS], y[EMU_POINTS];
	} s[EMU_SERIES];
};

struct fopts {
	const char *params, *measured, *gnuplot;
	bool json;
};

static void fig_usage(FILE *f)
{
	fprintf(f,
		"usage: smartio predict figure [ID|all|list] [--json] [--measured FILE]\n"
		"                              [--gnuplot DIR] [--params FILE]\n\n"
		"The papers' figures from the timing model: one curve (throughput vs\n"
		"transfer size) or bar (latency) per scenario, from the setup's hop list\n"
		"and the one parameter set; the numbers the papers state, with the model's\n"
		"value and the drift; and, with --measured, the emulated cluster's results.\n"
		"  ID              a figure (see 'list'); default: all\n"
		"  --measured FILE lines 'FIGURE-ID LABEL X VALUE': emulated results (X: size\n"
		"                  in bytes, 0 for a bar; VALUE in the figure's unit)\n"
		"  --gnuplot DIR   write DIR/ID.dat and DIR/ID.gp (gnuplot DIR/ID.gp -> ID.png)\n"
		"  --params FILE   calibration (default: built-in = topologies/timing.yaml)\n"
		"Exit status: 0, 1 if a stated number drifts more than 10%%, 2 usage error.\n");
}

/* The emulated series of figure id from FILE; 0, or -errno. */
static int emu_load(const char *file, const char *id, struct emu *e)
{
	char line[256], fid[64], label[EMU_LABEL];
	double x, y;
	FILE *f;

	memset(e, 0, sizeof(*e));
	if (!file)
		return 0;
	f = fopen(file, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned i;

		if (line[0] == '#' || sscanf(line, "%63s %47s %lf %lf", fid, label, &x, &y) != 4 ||
		    strcmp(fid, id))
			continue;
		for (i = 0; i < e->n && strcmp(e->s[i].label, label); i++)
			;
		if (i == e->n) {
			if (e->n == EMU_SERIES)
				continue;
			/* The label ends up in gnuplot's quoted strings. */
			for (char *c = label; *c; c++)
				if (*c == '\'' || *c == '"' || *c == '\\')
					*c = '_';
			snprintf(e->s[e->n++].label, EMU_LABEL, "%s", label);
		}
		if (e->s[i].n < EMU_POINTS) {
			e->s[i].x[e->s[i].n] = x;
			e->s[i].y[e->s[i].n++] = y;
		}
	}
	fclose(f);
	return 0;
}

static bool emu_at(const struct emu *e, unsigned s, double x, double *y)
{
	for (unsigned i = 0; i < e->s[s].n; i++)
		if (e->s[s].x[i] == x) {
			*y = e->s[s].y[i];
			return true;
		}
	return false;
}

/* Is check id in the comma-separated list? */
static bool has_check(const char *list, const char *id)
{
	size_t n = strlen(id);

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (len == n && !strncmp(p, id, n))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

static const char *size_str(double x, char *buf, size_t len)
{
	uint64_t v = (uint64_t)x;

	if (v >= (1u << 20) && !(v % (1u << 20)))
		snprintf(buf, len, "%" PRIu64 " MiB", v >> 20);
	else if (v >= 1024 && !(v % 1024))
		snprintf(buf, len, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " B", v);
	return buf;
}

static int colw(const char *label)
{
	int n = (int)strlen(label);

	return n < 9 ? 9 : n;
}

static void text_curves(const struct timing_figure *f, const struct emu *e)
{
	char b[32];

	printf("  %-9s", "size");
	for (unsigned s = 0; s < f->nseries; s++)
		printf("  %*s", colw(f->s[s].label), f->s[s].label);
	if (e->n)
		printf("  |");
	for (unsigned s = 0; s < e->n; s++)
		printf("  %*s", colw(e->s[s].label), e->s[s].label);
	printf("\n  %-9s  model, %s (PCIe prediction)%s\n", "", f->unit,
	       e->n ? "  |  emulated, wall clock" : "");
	for (unsigned i = 0; i < f->s[0].n; i++) {
		printf("  %-9s", size_str(f->s[0].x[i], b, sizeof(b)));
		for (unsigned s = 0; s < f->nseries; s++)
			printf("  %*.3f", colw(f->s[s].label), f->s[s].y[i]);
		if (e->n)
			printf("  |");
		for (unsigned s = 0; s < e->n; s++) {
			double y;

			if (emu_at(e, s, f->s[0].x[i], &y))
				printf("  %*.3f", colw(e->s[s].label), y);
			else
				printf("  %*s", colw(e->s[s].label), "-");
		}
		putchar('\n');
	}
}

static void text_bars(const struct timing_figure *f, const struct emu *e)
{
	for (unsigned s = 0; s < f->nseries; s++)
		printf("  model     %-26s %10.0f %s   %s\n", f->s[s].label, f->s[s].y[0], f->unit,
		       f->s[s].path);
	for (unsigned s = 0; s < e->n; s++)
		printf("  emulated  %-26s %10.0f %s   (wall clock)\n", e->s[s].label,
		       e->s[s].y[0], f->unit);
}

/* "points": [[x, y], ...]: sizes whole, values to 4 decimals. */
static int json_points(struct json_object *o, const double *x, const double *y, unsigned n)
{
	struct json_object *pts = json_object_new_array();

	if (!pts)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct json_object *pt = json_object_new_array();

		if (!pt || smio_json_push_double(pt, x[i], "%.0f") ||
		    smio_json_push_double(pt, y[i], "%.4f")) {
			json_object_put(pt);
			json_object_put(pts);
			return -ENOMEM;
		}
		if (smio_json_push(pts, pt)) {          /* it released pt */
			json_object_put(pts);
			return -ENOMEM;
		}
	}
	return smio_json_add(o, "points", pts);
}

/* {"label": ..., ["path": ...,] "points": ...} appended to arr. */
static int json_series(struct json_object *arr, const char *label, const char *path,
		       const double *x, const double *y, unsigned n)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_str(o, "label", label) ||
	    (path && smio_json_add_str(o, "path", path)) || json_points(o, x, y, n)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

static int json_check(struct json_object *arr, const struct timing_check *c, bool ok)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_str(o, "id", c->id) || smio_json_add_str(o, "unit", c->unit) ||
	    smio_json_add_double(o, "stated", c->stated, "%.3f") ||
	    smio_json_add_double(o, "stated_lo", c->stated_lo, "%.3f") ||
	    smio_json_add_double(o, "stated_hi", c->stated_hi, "%.3f") ||
	    smio_json_add_double(o, "predicted", c->predicted, "%.3f") ||
	    smio_json_add_double(o, "drift_pct", 100.0 * (c->predicted - c->stated) / c->stated,
				 "%.2f") ||
	    smio_json_add_bool(o, "ok", ok) || smio_json_add_str(o, "what", c->what) ||
	    smio_json_add_str(o, "detail", c->detail)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

/* The figure's object, appended to figs; 0 or -ENOMEM. */
static int json_figure(struct json_object *figs, const struct timing_figure *f,
		       const struct emu *e, const struct timing_check *c, const bool *ok,
		       unsigned nc, unsigned bad)
{
	struct json_object *o = json_object_new_object(), *model = json_object_new_array(),
			   *paper = json_object_new_array(), *emu = json_object_new_object(),
			   *series = json_object_new_array();
	char topo[PATH_MAX];
	int rc = -ENOMEM;

	snprintf(topo, sizeof(topo), "topologies/papers/%s", f->topology);
	if (!o || !model || !paper || !emu || !series)
		goto out;
	for (unsigned i = 0; i < f->nseries; i++)
		if (json_series(model, f->s[i].label, f->s[i].path, f->s[i].x, f->s[i].y,
				f->s[i].n))
			goto out;
	for (unsigned i = 0; i < nc; i++)
		if (json_check(paper, &c[i], ok[i]))
			goto out;
	for (unsigned i = 0; i < e->n; i++)
		if (json_series(series, e->s[i].label, NULL, e->s[i].x, e->s[i].y, e->s[i].n))
			goto out;
	if (smio_json_add_str(emu, "note", EMU_NOTE))
		goto out;
	rc = smio_json_add(emu, "series", series);
	series = NULL;                       /* held by its parent, or released */
	if (rc || smio_json_add_str(o, "id", f->id) || smio_json_add_str(o, "source", f->source) ||
	    smio_json_add_str(o, "title", f->title) || smio_json_add_str(o, "unit", f->unit) ||
	    smio_json_add_str(o, "kind", f->bars ? "bars" : "curve") ||
	    smio_json_add_str(o, "topology", topo) || smio_json_add_str(o, "note", f->note))
		goto fail;
	rc = smio_json_add(o, "model", model);
	model = NULL;
	if (!rc) {
		rc = smio_json_add(o, "paper", paper);
		paper = NULL;
	}
	if (!rc) {
		rc = smio_json_add(o, "emulated", emu);
		emu = NULL;
	}
	if (rc || smio_json_add_uint(o, "outside", bad))
		goto fail;
	rc = smio_json_push(figs, o);
	o = NULL;
	goto out;
fail:
	rc = -ENOMEM;
out:
	json_object_put(series);
	json_object_put(emu);
	json_object_put(paper);
	json_object_put(model);
	json_object_put(o);
	return rc;
}

/* DIR/ID.dat (one block per series) and DIR/ID.gp; 0 or -errno. */
static int gnuplot_files(const char *dir, const struct timing_figure *f, const struct emu *e,
			 const struct timing_check *c, unsigned nc)
{
	char dat[PATH_MAX], gp[PATH_MAX];
	FILE *d, *g;
	unsigned blk = 0;

	if ((size_t)snprintf(dat, sizeof(dat), "%s/%s.dat", dir, f->id) >= sizeof(dat) ||
	    (size_t)snprintf(gp, sizeof(gp), "%s/%s.gp", dir, f->id) >= sizeof(gp))
		return -ENAMETOOLONG;
	d = fopen(dat, "w");
	if (!d)
		return -errno;
	g = fopen(gp, "w");
	if (!g) {
		int rc = -errno;

		fclose(d);
		return rc;
	}
	fprintf(g, "# generated by smartio predict figure %s --gnuplot\n"
		"set terminal pngcairo size 960,600 noenhanced font ',10'\n"
		"set output '%s/%s.png'\n"
		"set title \"%s: %s\\n%s\"\n"
		"set key outside below\nset grid\nset ytics nomirror\n", f->id, dir, f->id, f->id,
		f->title, f->source);
	if (f->bars) {
		fprintf(g, "set style fill solid 0.6 border -1\nset boxwidth 0.6\n"
			"set ylabel 'model %s (PCIe prediction)'\nset yrange [0:*]\n"
			"set xtics rotate by -20\n", f->unit);
		if (e->n)
			fprintf(g, "set y2tics\nset y2label 'emulated %s (wall clock, memory speed)'\n"
				"set y2range [0:*]\nset xrange [-0.5:%u.5]\n", f->unit,
				f->nseries + e->n - 1);
		fprintf(d, "# model\n");
		for (unsigned s = 0; s < f->nseries; s++)
			fprintf(d, "\"%s\" %.3f\n", f->s[s].label, f->s[s].y[0]);
		fprintf(g, "plot '%s' index 0 using 0:2:xtic(1) with boxes title 'model (PCIe)'",
			dat);
		if (e->n) {
			fprintf(d, "\n\n# emulated\n");
			for (unsigned s = 0; s < e->n; s++)
				fprintf(d, "\"emu %s\" %.3f\n", e->s[s].label, e->s[s].y[0]);
			fprintf(g, ", '' index 1 using ($0+%u):2:xtic(1) axes x1y2 with boxes "
				"fill pattern 4 title 'emulated, wall clock (right axis)'", f->nseries);
		}
		fputc('\n', g);
	} else {
		fprintf(g, "set logscale x 2\nset format x '%%.0b %%BB'\n"
			"set xlabel 'transfer size'\nset ylabel 'model %s (PCIe prediction)'\n"
			"set yrange [0:*]\n", f->unit);
		if (e->n)
			fprintf(g, "set y2tics\nset y2range [0:*]\n"
				"set y2label 'emulated %s (wall clock, memory speed)'\n", f->unit);
		for (unsigned i = 0; i < nc; i++)
			fprintf(g, "set arrow from graph 0, first %.3f to graph 1, first %.3f nohead "
				"dt 3 lw 2\nset label 'paper: %s %.3g %s' at graph 0.02, first %.3f "
				"offset 0,0.7\n", c[i].stated, c[i].stated, c[i].id, c[i].stated,
				c[i].unit, c[i].stated);
		fprintf(g, "plot");
		for (unsigned s = 0; s < f->nseries; s++, blk++) {
			fprintf(d, "# model %s\n", f->s[s].label);
			for (unsigned i = 0; i < f->s[s].n; i++)
				fprintf(d, "%.0f %.4f\n", f->s[s].x[i], f->s[s].y[i]);
			fprintf(d, "\n\n");
			fprintf(g, "%s '%s' index %u using 1:2 with linespoints lw 2 title 'model: %s'",
				s ? "," : "", dat, blk, f->s[s].label);
		}
		for (unsigned s = 0; s < e->n; s++, blk++) {
			fprintf(d, "# emulated %s\n", e->s[s].label);
			for (unsigned i = 0; i < e->s[s].n; i++)
				fprintf(d, "%.0f %.4f\n", e->s[s].x[i], e->s[s].y[i]);
			fprintf(d, "\n\n");
			fprintf(g, ", '%s' index %u using 1:2 axes x1y2 with linespoints dt 2 "
				"title 'emulated: %s (right axis)'", dat, blk, e->s[s].label);
		}
		fputc('\n', g);
	}
	fclose(d);
	return fclose(g) ? -errno : 0;
}

/* One figure, as text or into figs (--json): 0, 1 (a stated number drifts), or -errno. */
static int one_figure(const struct fopts *o, const struct timing_params *p, unsigned idx,
		      struct json_object *figs)
{
	struct timing_check c[8];
	bool ok[8];
	struct timing_figure f;
	struct emu e;
	unsigned nc = 0, bad = 0;
	int rc = timing_figure(p, idx, &f);

	if (rc) {
		cli_err("figure %u: the model cannot build it (%s)", idx, strerror(-rc));
		return rc;
	}
	rc = emu_load(o->measured, f.id, &e);
	if (rc) {
		cli_err("%s: %s", o->measured, strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < timing_paper_count() && nc < 8; i++) {
		if (timing_paper_check(p, i, &c[nc]) || !has_check(f.checks, c[nc].id))
			continue;
		ok[nc] = timing_check_ok(&c[nc]);
		bad += !ok[nc];
		nc++;
	}
	if (o->gnuplot) {
		rc = gnuplot_files(o->gnuplot, &f, &e, c, nc);
		if (rc) {
			cli_err("%s/%s.{dat,gp}: %s", o->gnuplot, f.id, strerror(-rc));
			return rc;
		}
	}
	if (o->json) {
		rc = json_figure(figs, &f, &e, c, ok, nc, bad);
		if (rc) {
			cli_err("figure %s: %s", f.id, strerror(-rc));
			return rc;
		}
		return bad ? 1 : 0;
	}
	printf("== %s: %s\n   %s; setup topologies/papers/%s\n   %s\n", f.id, f.title, f.source,
	       f.topology, f.note);
	if (f.bars)
		text_bars(&f, &e);
	else
		text_curves(&f, &e);
	if (!nc)
		printf("  paper: states no number for this figure (curve shape only)\n");
	for (unsigned i = 0; i < nc; i++)
		printf("  paper: %-20s %8.4g %-4s  model %8.4g %-4s  %+6.1f%%  %s\n", c[i].id,
		       c[i].stated, c[i].unit, c[i].predicted, c[i].unit,
		       100.0 * (c[i].predicted - c[i].stated) / c[i].stated,
		       ok[i] ? "ok (within 10%)" : "OUTSIDE 10%");
	if (e.n)
		printf("  (%s)\n", EMU_NOTE);
	putchar('\n');
	return bad ? 1 : 0;
}

int cmd_predict_figure(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "measured", required_argument, NULL, 'm' },
		{ "gnuplot", required_argument, NULL, 'g' },
		{ "params", required_argument, NULL, 'P' }, { "help", no_argument, NULL, 'h' },
		{ 0 } };
	struct json_object *root = NULL, *figs = NULL;
	struct fopts o = { 0 };
	struct timing_params p;
	const char *id = "all";
	unsigned outside = 0;
	char err[512];
	int ch, rc, idx = -1;

	optind = 2;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j': o.json = true; break;
		case 'm': o.measured = optarg; break;
		case 'g': o.gnuplot = optarg; break;
		case 'P': o.params = optarg; break;
		case 'h': return fig_usage(stdout), 0;
		default: return fig_usage(stderr), 2;
		}
	}
	if (optind < argc)
		id = argv[optind++];
	if (optind < argc)
		return cli_err("predict figure: unexpected argument '%s'", argv[optind]), 2;
	if (!strcmp(id, "list")) {
		for (unsigned i = 0; i < timing_figure_count(); i++) {
			struct timing_figure f;

			timing_params_default(&p);
			if (!timing_figure(&p, i, &f))
				printf("%-15s %s (%s)\n", f.id, f.title, f.source);
		}
		return 0;
	}
	if (strcmp(id, "all")) {
		idx = timing_figure_find(id);
		if (idx < 0)
			return cli_err("no figure '%s' (smartio predict figure list)", id), 2;
	}
	timing_params_default(&p);
	if (o.params) {
		rc = timing_params_load_file(o.params, &p, err, sizeof(err));
		if (rc)
			return cli_err("%s", err), 2;
	}
	if (o.json) {
		root = json_object_new_object();
		figs = json_object_new_array();
		if (!root || !figs ||
		    smio_json_add_double(root, "tolerance", TIMING_TOLERANCE, "%.2f")) {
			json_object_put(figs);
			json_object_put(root);
			return cli_err("predict figure: out of memory"), 1;
		}
	}
	for (unsigned i = 0; i < timing_figure_count(); i++) {
		if (idx >= 0 && (unsigned)idx != i)
			continue;
		rc = one_figure(&o, &p, i, figs);
		if (rc < 0) {
			json_object_put(figs);
			json_object_put(root);
			return 1;
		}
		outside += (unsigned)rc;
	}
	if (o.json) {
		rc = smio_json_add(root, "figures", figs);
		if (!rc)
			rc = smio_json_add_uint(root, "outside", outside);
		if (rc)
			cli_err("predict figure: out of memory");
		else
			rc = cli_json_print(root);
		json_object_put(root);
		if (rc)
			return 1;
	} else if (outside)
		printf("%u figure(s) carry a stated number more than 10%% off the model\n", outside);
	return outside ? 1 : 0;
}

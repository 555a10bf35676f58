#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""smartio web in a real browser (issue 17's acceptance; docs/web.md).

Headless Chromium (Debian's chromium, chromium-driver, python3-selenium; the
test skips with a message where they are absent) loads the page of a running
default cluster: it sees the three hosts and five devices, borrows a device
with the page's Borrow button, sees the lease appear, then `smartio ntb --host
0 link down` turns the cable and the lease's path red within 1 s. A screenshot
goes to the build directory (web_test.png). /metrics parses as strict
Prometheus text and a POST without the token is refused (403). TAP output."""
import importlib.util
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webtest_lib import BUILD, Cluster, Tap, http, parse_prometheus  # noqa: E402

SKIP = 77                 # meson: the test was skipped
CHROMIUM = "/usr/bin/chromium"
NVME_A = "0x00080400"
CABLE0 = "h0.ntb0-mxs0"
RED = "rgb(211, 47, 47)"  # #d32f2f in the page's style


def skip(why):
    print("1..0 # SKIP " + why)
    print("web_test skipped: %s (make deps-test installs chromium, chromium-driver and "
          "python3-selenium)" % why, file=sys.stderr)
    sys.exit(SKIP)


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1500,1100", "--no-first-run", "--disable-extensions"):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def main():
    if not os.access(CHROMIUM, os.X_OK):
        skip("no %s" % CHROMIUM)
    if not shutil.which("chromedriver"):
        skip("no chromedriver")
    if importlib.util.find_spec("selenium") is None:
        # Debian's python3-selenium is for Debian's python3; another python3
        # (a pyenv, a venv) first on PATH does not see it.
        deb = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(deb) and os.access(deb, os.X_OK):
            os.execv(deb, [deb] + sys.argv)
        skip("no python3-selenium")
    from selenium.webdriver.common.by import By

    t = Tap()
    c = Cluster()
    drv = None
    try:
        c.up()
        url, token = c.start_web()
        drv = browser()
        drv.set_script_timeout(10)
        drv.get(url + "#token=" + token)

        def count(css):
            return len(drv.find_elements(By.CSS_SELECTOR, css))

        def poll(pred, timeout, step=0.02):
            deadline = time.time() + timeout
            while True:
                try:
                    v = pred()
                except Exception:  # noqa: BLE001 (a node replaced under us: look again)
                    v = None
                if v or time.time() >= deadline:
                    return v
                time.sleep(step)

        t.ok(poll(lambda: count("svg g.host") == 3, 20), "the page draws three hosts",
             drv.page_source[:2000])
        t.ok(poll(lambda: count("#pool tr.dev") == 5, 10), "the pool lists five devices",
             "%d rows" % count("#pool tr.dev"))
        t.ok(poll(lambda: drv.find_element(By.ID, "status").text == "live", 10),
             "the event stream is live")
        t.ok(drv.find_element(By.ID, "token").get_attribute("value") == token,
             "the token came from the link")

        sel = drv.find_element(By.CSS_SELECTOR, 'select.borrow-host[data-fdid="%s"]' % NVME_A)
        t.ok(sel.get_attribute("value") == "0", "Borrow defaults to host 0 for lender-a's nvme0",
             sel.get_attribute("value"))
        # The page rebuilds the pool's rows on every changed snapshot (the daemons' peer
        # connections settle during the first polls): click the row that is there now.
        t.ok(poll(lambda: drv.find_element(
            By.CSS_SELECTOR, 'button.borrow[data-fdid="%s"]' % NVME_A).click() or True, 5),
             "the Borrow button takes the click")
        t.ok(poll(lambda: "ok" in drv.find_element(By.ID, "result").get_attribute("class"), 20),
             "Borrow succeeds", drv.find_element(By.ID, "result").text)
        row = 'tr.dev[data-fdid="%s"][data-state="lent"]' % NVME_A
        t.ok(poll(lambda: count(row) == 1 and "host 1 → host 0" in
                  drv.find_element(By.CSS_SELECTOR, row).text, 5),
             "the lease appears in the pool (lender → borrower)")
        lease = 'polyline.lease[data-fdid="%s"]' % NVME_A
        t.ok(poll(lambda: drv.find_element(By.CSS_SELECTOR, lease).get_attribute("data-state") == "up", 5),
             "the lease's path is drawn")
        t.ok(poll(lambda: drv.find_element(By.CSS_SELECTOR, row + " td.age").text not in ("", "–"), 5),
             "the lease has an age")

        r = c.run("ntb", "--host", "0", "link", "down")
        t0 = time.time()

        def red():
            cab = drv.find_element(By.ID, "cable-" + CABLE0)
            path = drv.find_element(By.CSS_SELECTOR, lease)
            return (cab.get_attribute("data-state") == "down" and
                    path.get_attribute("data-state") == "down" and
                    cab.value_of_css_property("stroke") == RED and
                    path.value_of_css_property("stroke") == RED)

        ok = poll(red, 3, step=0.01)
        took = time.time() - t0
        t.ok(r.returncode == 0 and ok and took < 1.0,
             "link down: cable and lease path red within 1 s (%.2f s)" % took, r.stderr)
        t.ok(poll(lambda: count('#events li[data-kind="link-down"]') >= 1, 3),
             "the event log shows the link going down")
        shot = os.path.join(os.path.realpath(BUILD), "web_test.png")
        t.ok(drv.save_screenshot(shot) and os.path.getsize(shot) > 10000,
             "screenshot saved to %s" % shot)

        code, ctype, body = http(url + "metrics")
        try:
            m = parse_prometheus(body)
            t.ok(code == 200 and len(m["smartio_host_up"]["samples"]) == 3 and
                 any(s[0].get("cable") == CABLE0 and s[1] == 0 for s in m["smartio_cable_up"]["samples"]),
                 "/metrics parses as Prometheus text and shows the cable down", body[:600])
        except (ValueError, KeyError) as e:
            t.ok(False, "/metrics parses as Prometheus text", "%s\n%s" % (e, body[:600]))
        code, _, body = http(url + "api/return", {"fdid": NVME_A, "host": "0"})
        t.ok(code == 403, "POST without the token: 403", "%s %s" % (code, body))
    finally:
        if drv:
            drv.quit()
        c.close()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
